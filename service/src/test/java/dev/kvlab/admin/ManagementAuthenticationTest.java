package dev.kvlab.admin;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.heal.Handoff;
import dev.kvlab.heal.RepairService;
import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.KvClient;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The management port changes state only for a caller that holds the cluster secret or the admin
 * token: a leave or a repair without one, or with a wrong one, is answered 401 and nothing moves;
 * the probes, metrics and the cluster's status stay open to everyone.
 */
class ManagementAuthenticationTest {

    static final String ADMIN_TOKEN = "admin-" + UUID.randomUUID();
    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        // Repair runs only when asked for, so a round that starts is the one a call asked for.
        cluster = InProcessCluster.start(3, Map.of("kvlab.replication.timeout", "500ms", "kvlab.heal.repair.enabled", "false",
                "kvlab.management.admin-token", ADMIN_TOKEN));
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aRepairWithoutTheCredentialIsRefusedAndNoRoundStarts() throws Exception {
        KvClient management = cluster.management(0);
        assertRefused(post(management, "/actuator/kvlab/repair"), "needs a credential");
        assertRefused(post(management, "/actuator/kvlab/repair", "Authorization", "Bearer not-the-secret-" + UUID.randomUUID()),
                "neither the cluster secret nor the admin token");
        assertRefused(post(management, "/actuator/kvlab/repair", "Authorization", "Basic " + cluster.secret()), "Bearer");
        // A round asked for starts within a second: none may have started.
        Thread.sleep(1500);
        RepairService repair = cluster.bean(0, RepairService.class);
        assertThat(repair.roundsComplete() + repair.roundsFailed()).as("repair rounds after refused calls").isZero();
        assertThat(repair.status().values()).allSatisfy(peer -> assertThat(peer.lastRound()).isNull());

        HttpResponse<byte[]> asked = post(management, "/actuator/kvlab/repair", "Authorization", "Bearer " + cluster.secret());
        assertThat(asked.statusCode()).as(text(asked)).isEqualTo(200);
        await().atMost(Duration.ofSeconds(20)).until(() -> repair.roundsComplete() >= 2);
    }

    @Test
    void aLeaveWithoutTheCredentialIsRefusedAndTheNodeStays() throws Exception {
        KvClient management = cluster.management(1);
        assertRefused(post(management, "/actuator/kvlab/leave"), "needs a credential");
        assertRefused(post(management, "/actuator/kvlab/leave", "Authorization", "Bearer " + cluster.secret() + "x"),
                "neither the cluster secret nor the admin token");
        assertRefused(management.send("DELETE", "/actuator/kvlab/leave", HttpRequest.BodyPublishers.noBody()), "needs a credential");
        Thread.sleep(500);
        assertThat(cluster.bean(1, Handoff.class).leaving()).as("a leave under way after refused calls").isNull();
        // Counted, for an operator to see.
        assertThat(cluster.bean(1, MeterRegistry.class).counter("kvlab.management.refused").count()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void theAdminTokenAuthorizesAsTheClusterSecretDoes() {
        // The last node of the list: the nodes that stay are the first ones, as a StatefulSet shrinks.
        HttpResponse<byte[]> leave = post(cluster.management(2), "/actuator/kvlab/leave", "Authorization", "bearer  " + ADMIN_TOKEN);
        assertThat(leave.statusCode()).as(text(leave)).isEqualTo(200);
        assertThat(cluster.bean(2, Handoff.class).leaving()).isNotNull();
    }

    @Test
    void probesMetricsAndTheStatusAnswerWithoutACredential() {
        KvClient management = cluster.management(0);
        for (String path : new String[] {"/actuator/health", "/actuator/health/liveness", "/actuator/health/readiness",
                "/actuator/prometheus", "/actuator/metrics", "/actuator/info", "/actuator/kvlab"}) {
            HttpResponse<byte[]> response = management.send("GET", path, HttpRequest.BodyPublishers.noBody());
            assertThat(response.statusCode()).as(path + ": " + text(response)).isEqualTo(200);
        }
    }

    @Test
    void theClientPortNeedsNoManagementCredential() {
        // The guard lives on the management port alone: the client API's writes are not its business.
        assertThat(cluster.client(0).put("no-admin-needed", "v").statusCode()).isEqualTo(201);
        assertThat(cluster.client(0).delete("no-admin-needed").statusCode()).isBetween(200, 299);
        // Nor is the actuator there, with or without a credential.
        HttpResponse<byte[]> repair = post(cluster.client(0), "/actuator/kvlab/repair");
        assertThat(repair.statusCode()).as(text(repair)).isEqualTo(404);
    }

    private static void assertRefused(HttpResponse<byte[]> response, String reason) {
        assertThat(response.statusCode()).as(text(response)).isEqualTo(401);
        assertThat(response.headers().firstValue("WWW-Authenticate")).hasValueSatisfying(value -> assertThat(value).startsWith("Bearer"));
        assertThat(text(response)).contains(reason);
    }

    private static HttpResponse<byte[]> post(KvClient management, String path, String... headers) {
        String[] all = new String[headers.length + 2];
        all[0] = "Content-Type";
        all[1] = "application/json";
        System.arraycopy(headers, 0, all, 2, headers.length);
        return management.send("POST", path, HttpRequest.BodyPublishers.ofString("{}"), all);
    }
}

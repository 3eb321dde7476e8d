package dev.kvlab.api;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.testing.KvClient;
import dev.kvlab.testing.RawHttp;
import java.io.ByteArrayInputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Every row of API.md for a cluster of one: the real server on a random port over a real RocksDB. */
// RequestMetrics' debug line is how a test knows the node has seen a client hang up.
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "logging.level.dev.kvlab.api.RequestMetrics=debug")
@ExtendWith(OutputCaptureExtension.class)
class SingleNodeApiTest {

    @DynamicPropertySource
    static void storage(DynamicPropertyRegistry registry) throws Exception {
        var dir = Files.createTempDirectory("kvlab-api-test");
        registry.add("kvlab.storage.dir", dir::toString);
    }

    @LocalServerPort
    int port;

    @LocalManagementPort
    int managementPort;

    KvClient client;

    @BeforeEach
    void client() {
        client = KvClient.onPort(port);
    }

    @Test
    void statusAnswersOnceTheNodeServes() {
        HttpResponse<byte[]> status = client.send("GET", "/v0/status", BodyPublishers.noBody());
        assertThat(status.statusCode()).isEqualTo(200);
        assertThat(text(status)).isEqualTo("OK\n");
        assertThat(status.headers().firstValue("content-type")).hasValue("text/plain");
    }

    @Test
    void probesAndPrometheusMetricsAreServedOnTheManagementPort() {
        client.put("metered", "v");
        client.get("metered", "9/9");
        KvClient management = KvClient.onPort(managementPort);

        assertThat(management.send("GET", "/actuator/health/liveness", BodyPublishers.noBody()).statusCode()).isEqualTo(200);
        assertThat(management.send("GET", "/actuator/health/readiness", BodyPublishers.noBody()).statusCode()).isEqualTo(200);
        String metrics = text(management.send("GET", "/actuator/prometheus", BodyPublishers.noBody()));
        assertThat(metrics)
                .contains("kvlab_requests_seconds_bucket{application=\"kvlab\",operation=\"put\",status=\"201\"")
                .contains("kvlab_requests_seconds_count{application=\"kvlab\",operation=\"get\",status=\"400\"}")
                .contains("kvlab_rocksdb{application=\"kvlab\",property=\"estimate-num-keys\"}")
                .contains("kvlab_cluster_nodes{application=\"kvlab\"} 1.0");
    }

    @Test
    void theClientPortServesNoneOfTheActuator() {
        for (String endpoint : List.of("/actuator", "/actuator/health", "/actuator/health/readiness", "/actuator/prometheus",
                "/actuator/metrics", "/actuator/info", "/actuator/env", "/actuator/heapdump")) {
            assertThat(client.send("GET", endpoint, BodyPublishers.noBody()).statusCode()).as(endpoint).isEqualTo(404);
        }
        assertThat(KvClient.onPort(managementPort).send("GET", "/actuator/env", BodyPublishers.noBody()).statusCode())
                .as("what is not exposed is not served on the management port either").isEqualTo(404);
    }

    @Test
    void aNodeOutsideAnyClusterTakesNoReplicaCalls() {
        HttpResponse<byte[]> forged = client.send("PUT", "/internal/v1/record?id=k1", BodyPublishers.ofString("evil"),
                "X-Kvlab-Version", "9223372036854775807.2147483647");

        assertThat(forged.statusCode()).isEqualTo(401);
        assertThat(text(forged)).contains("not part of a cluster");
        assertThat(client.put("k1", "mine").statusCode()).isEqualTo(201);
        assertThat(text(client.get("k1"))).isEqualTo("mine");
    }

    @Test
    void putCreatesAndGetReturnsTheValue() {
        assertThat(client.put("greeting", "hello").statusCode()).isEqualTo(201);

        HttpResponse<byte[]> response = client.get("greeting");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(text(response)).isEqualTo("hello");
        assertThat(response.headers().firstValue("content-type")).hasValue("application/octet-stream");
    }

    @Test
    void putOverwrites() {
        client.put("overwritten", "first");
        client.put("overwritten", "second");

        assertThat(text(client.get("overwritten"))).isEqualTo("second");
    }

    @Test
    void getOfAnAbsentKeyIs404WithAMessage() {
        HttpResponse<byte[]> response = client.get("never-written");

        assertThat(response.statusCode()).isEqualTo(404);
        assertThat(text(response)).isNotBlank();
    }

    @Test
    void deleteIsAcceptedAndTheKeyIsGone() {
        client.put("doomed", "v");

        assertThat(client.delete("doomed").statusCode()).isEqualTo(202);
        assertThat(client.get("doomed").statusCode()).isEqualTo(404);
    }

    @Test
    void deletingAnAbsentKeyIsFine() {
        assertThat(client.delete("was-never-there").statusCode()).isEqualTo(202);
    }

    @Test
    void aKeyCanBeWrittenAgainAfterADelete() {
        client.put("phoenix", "one");
        client.delete("phoenix");
        client.put("phoenix", "two");

        assertThat(text(client.get("phoenix"))).isEqualTo("two");
    }

    @Test
    void anEmptyValueIsARealValue() {
        assertThat(client.put("empty", new byte[0]).statusCode()).isEqualTo(201);

        HttpResponse<byte[]> response = client.get("empty");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEmpty();
    }

    @Test
    void binaryValuesComeBackByteForByte() {
        byte[] value = new byte[256];
        for (int i = 0; i < value.length; i++) {
            value[i] = (byte) i;
        }
        client.put("all-bytes", value);

        assertThat(client.get("all-bytes").body()).isEqualTo(value);
    }

    @Test
    void nonAsciiAndBinaryKeysAreKeptExactly() {
        client.put("ключ-€-😀", "unicode");
        client.send("PUT", "/v0/entity?id=%FF%00%01raw", BodyPublishers.ofString("binary"));

        assertThat(text(client.get("ключ-€-😀"))).isEqualTo("unicode");
        assertThat(text(client.send("GET", "/v0/entity?id=%FF%00%01raw", BodyPublishers.noBody()))).isEqualTo("binary");
        // 0xFF alone is not UTF-8: it must not collide with the replacement character.
        assertThat(client.send("GET", "/v0/entity?id=%EF%BF%BD%00%01raw", BodyPublishers.noBody()).statusCode()).isEqualTo(404);
    }

    @Test
    void aOneMebibyteValueIsAcceptedAndOneByteMoreIs413() {
        byte[] max = randomBytes(1024 * 1024);
        assertThat(client.put("max-size", max).statusCode()).isEqualTo(201);
        assertThat(client.get("max-size").body()).isEqualTo(max);

        HttpResponse<byte[]> tooLarge = client.put("max-size", randomBytes(1024 * 1024 + 1));
        assertThat(tooLarge.statusCode()).isEqualTo(413);
        assertThat(text(tooLarge)).contains("1048576");
        assertThat(client.get("max-size").body()).as("a rejected PUT changes nothing").isEqualTo(max);
    }

    @Test
    void aChunkedValueIsStoredWholeAndOneOverTheLimitIs413() {
        byte[] value = randomBytes(300_000);
        assertThat(client.send("PUT", KvClient.entity("chunked", null), chunked(value)).statusCode()).isEqualTo(201);
        assertThat(client.get("chunked").body()).isEqualTo(value);

        HttpResponse<byte[]> tooLarge = client.send("PUT", KvClient.entity("chunked", null), chunked(randomBytes(1024 * 1024 + 1)));
        assertThat(tooLarge.statusCode()).isEqualTo(413);
        assertThat(text(tooLarge)).contains("1048576");
        assertThat(client.get("chunked").body()).as("a rejected PUT changes nothing").isEqualTo(value);
    }

    @Test
    void aClientThatSendsAllOfARefusedValueBeforeReadingGetsIts413() throws Exception {
        // Up to twice the limit the node reads a refused body to its end before it closes the
        // connection; closing with bytes unread would reset it, and the client would lose the 413.
        for (boolean chunked : new boolean[] {false, true}) {
            RawHttp.Response refused = RawHttp.put(port, KvClient.entity("refused", null), randomBytes(2 * 1024 * 1024), chunked);
            assertThat(refused.status()).as("chunked: %s", chunked).isEqualTo(413);
            assertThat(new String(refused.body(), StandardCharsets.UTF_8)).contains("1048576");
        }
        assertThat(client.get("refused").statusCode()).isEqualTo(404);
    }

    @Test
    void aClientThatHangsUpInTheMiddleOfABodyIsNoErrorAndStoresNothing(CapturedOutput output) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.getOutputStream().write(("PUT " + KvClient.entity("hung-up", null) + " HTTP/1.1\r\nHost: localhost\r\n"
                    + "Content-Length: 1000\r\n\r\n0123456789").getBytes(StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
            // Closing the socket hangs up with 990 bytes of the body never sent.
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> output.getOut().contains("the client closed the connection"));
        assertThat(output.getOut()).doesNotContain("ERROR");
        assertThat(client.get("hung-up").statusCode()).isEqualTo(404);
    }

    @Test
    void headAnswersAsGetWouldWithoutTheBody() {
        client.put("headed", "twelve bytes");

        HttpResponse<byte[]> found = client.send("HEAD", KvClient.entity("headed", null), BodyPublishers.noBody());
        assertThat(found.statusCode()).isEqualTo(200);
        assertThat(found.headers().firstValue("content-length")).hasValue("12");
        assertThat(found.headers().firstValue("content-type")).hasValue("application/octet-stream");
        HttpResponse<byte[]> absent = client.send("HEAD", KvClient.entity("never-headed", null), BodyPublishers.noBody());
        assertThat(absent.statusCode()).isEqualTo(404);
        // No body followed either head: the next answer on the same connection is read whole.
        assertThat(text(client.get("headed"))).isEqualTo("twelve bytes");
    }

    @Test
    void missingOrEmptyIdIs400WithAMessage() {
        for (String query : List.of("/v0/entity", "/v0/entity?id=", "/v0/entity?other=1")) {
            for (String method : List.of("GET", "PUT", "DELETE")) {
                HttpResponse<byte[]> response = client.send(method, query, BodyPublishers.ofString("v"));
                assertThat(response.statusCode()).as(method + " " + query).isEqualTo(400);
                assertThat(text(response)).contains("id");
            }
        }
    }

    @Test
    void keysAreLimitedTo1024Bytes() {
        String longest = "я".repeat(512);
        assertThat(client.put(longest, "ok").statusCode()).isEqualTo(201);
        assertThat(text(client.get(longest))).isEqualTo("ok");

        HttpResponse<byte[]> tooLong = client.put(longest + "x", "no");
        assertThat(tooLong.statusCode()).isEqualTo(400);
        assertThat(text(tooLong)).contains("1024");
    }

    @Test
    void replicasIsValidatedForAClusterOfOne() {
        assertThat(client.put("r", "v".getBytes(), "1/1").statusCode()).isEqualTo(201);
        assertThat(client.get("r", "1/1").statusCode()).isEqualTo(200);
        assertThat(client.delete("r", "1/1").statusCode()).isEqualTo(202);

        assertBadReplicas("1/2", "cluster has 1 node");
        assertBadReplicas("2/1", "ack must not be greater than from");
        assertBadReplicas("0/1", "ack must be at least 1");
        assertBadReplicas("0/0", "ack must be at least 1");
        for (String malformed : List.of("", "1", "1/", "/1", "a/b", "1/1/1", "-1/1", "1.0/1", "99999999999/1")) {
            assertBadReplicas(malformed, "malformed replicas");
        }
    }

    private void assertBadReplicas(String replicas, String message) {
        client.put("untouched", "original");
        for (String method : List.of("GET", "PUT", "DELETE")) {
            HttpResponse<byte[]> response = client.send(method, KvClient.entity("untouched", replicas), BodyPublishers.ofString("changed"));
            assertThat(response.statusCode()).as(method + " replicas=" + replicas).isEqualTo(400);
            assertThat(text(response)).contains(message);
        }
        assertThat(text(client.get("untouched"))).as("a bad request changes nothing").isEqualTo("original");
    }

    @Test
    void aTargetThatIsNotAUriIs400WithWhy() throws Exception {
        for (String target : List.of("/v0/entity?id=abc%2", "/v0/entity?id=%G1", "/v0/entity?id=a|b")) {
            RawHttp.Response response = RawHttp.get(port, target);
            assertThat(response.status()).as(target).isEqualTo(400);
            assertThat(new String(response.body(), StandardCharsets.UTF_8)).as(target)
                    .contains("not a valid URI").contains("percent-encode");
        }
        assertThat(RawHttp.get(port, "/v0/entity?id=%7C%C3%A9").status()).as("the same bytes encoded").isEqualTo(404);
    }

    @Test
    void otherMethodsAre405WithTheAllowedOnes() {
        for (String method : List.of("POST", "PATCH", "OPTIONS")) {
            HttpResponse<byte[]> response = client.send(method, "/v0/entity?id=x", BodyPublishers.noBody());
            assertThat(response.statusCode()).as(method).isEqualTo(405);
            assertThat(response.headers().firstValue("allow")).hasValue("GET, HEAD, PUT, DELETE");
        }
        assertThat(client.send("POST", "/v0/entities?start=a", BodyPublishers.noBody()).statusCode()).isEqualTo(405);
        HttpResponse<byte[]> statusDelete = client.send("DELETE", "/v0/status", BodyPublishers.noBody());
        assertThat(statusDelete.statusCode()).isEqualTo(405);
        assertThat(statusDelete.headers().firstValue("allow")).hasValue("GET, HEAD");
    }

    @Test
    void unknownPathsAre404NotServerErrors() {
        for (String path : List.of("/", "/v0", "/v0/entityx?id=1", "/v1/entity?id=1", "/v0/entity/extra")) {
            assertThat(client.send("GET", path, BodyPublishers.noBody()).statusCode()).as(path).isEqualTo(404);
        }
    }

    @Test
    void rangeStreamsLiveKeysInOrderOneChunkPerEntry() throws Exception {
        client.put("range-b", "2");
        client.put("range-a", "1");
        client.put("range-c", "3");
        client.put("range-d", "4");
        client.delete("range-c");

        RawHttp.Response response = RawHttp.get(port, "/v0/entities?start=range-&end=range-z");

        assertThat(response.status()).isEqualTo(200);
        assertThat(response.headers()).containsEntry("transfer-encoding", "chunked");
        assertThat(response.chunks()).extracting(chunk -> new String(chunk, StandardCharsets.UTF_8))
                .containsExactly("range-a\n1", "range-b\n2", "range-d\n4");
    }

    @Test
    void rangeIncludesStartExcludesEndAndRunsToTheLastKeyWithoutEnd() throws Exception {
        client.put("span-1", "a");
        client.put("span-2", "b");
        client.put("span-3", "c");

        assertThat(keys(RawHttp.get(port, "/v0/entities?start=span-2&end=span-3"))).containsExactly("span-2");
        assertThat(keys(RawHttp.get(port, "/v0/entities?start=span-2"))).startsWith("span-2", "span-3");
    }

    @Test
    void rangeOrdersNonAsciiKeysByTheirUtf8Bytes() throws Exception {
        for (String key : List.of("uni-я", "uni-z", "uni-é", "uni-€")) {
            client.put(key, "v");
        }

        assertThat(keys(RawHttp.get(port, "/v0/entities?start=uni-&end=uni-%F0")))
                .containsExactly("uni-z", "uni-é", "uni-я", "uni-€");
    }

    @Test
    void rangeWithoutStartIs400AsOftenAsItIsAsked() throws Exception {
        // More bad ranges than the node streams at once: none of them may keep its room.
        for (int i = 0; i < 4; i++) {
            for (String query : List.of("/v0/entities", "/v0/entities?start=", "/v0/entities?end=x")) {
                HttpResponse<byte[]> response = client.send("GET", query, BodyPublishers.noBody());
                assertThat(response.statusCode()).as(query).isEqualTo(400);
                assertThat(text(response)).contains("start");
            }
        }
        assertThat(RawHttp.get(port, "/v0/entities?start=after-bad-ranges").status()).isEqualTo(200);
    }

    @Test
    void rangeSpeaksNdjsonWhenAskedFor() throws Exception {
        client.put("json-1", new byte[] {0, 1, 2});
        client.put("json-2", "two");

        RawHttp.Response response = RawHttp.get(port, "/v0/entities?start=json-&end=json-z", "Accept: application/x-ndjson");

        assertThat(response.headers().get("content-type")).startsWith("application/x-ndjson");
        String[] lines = new String(response.body(), StandardCharsets.UTF_8).split("\n");
        Base64.Encoder base64 = Base64.getEncoder();
        assertThat(lines).containsExactly(
                "{\"key\":\"" + base64.encodeToString("json-1".getBytes()) + "\",\"value\":\"" + base64.encodeToString(new byte[] {0, 1, 2}) + "\"}",
                "{\"key\":\"" + base64.encodeToString("json-2".getBytes()) + "\",\"value\":\"" + base64.encodeToString("two".getBytes()) + "\"}");
    }

    private static List<String> keys(RawHttp.Response response) {
        assertThat(response.status()).isEqualTo(200);
        return response.chunks().stream()
                .map(chunk -> new String(Arrays.copyOf(chunk, indexOf(chunk, (byte) '\n')), StandardCharsets.UTF_8))
                .toList();
    }

    private static int indexOf(byte[] chunk, byte wanted) {
        for (int i = 0; i < chunk.length; i++) {
            if (chunk[i] == wanted) {
                return i;
            }
        }
        return chunk.length;
    }

    /** A body sent with Transfer-Encoding: chunked, its length not declared up front. */
    private static HttpRequest.BodyPublisher chunked(byte[] body) {
        return BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body));
    }

    private static byte[] randomBytes(int size) {
        byte[] bytes = new byte[size];
        new Random(size).nextBytes(bytes);
        return bytes;
    }
}

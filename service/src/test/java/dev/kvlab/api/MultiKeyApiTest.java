package dev.kvlab.api;

import static dev.kvlab.testing.KvClient.text;
import static dev.kvlab.testing.MultiKeyRequests.NDJSON;
import static dev.kvlab.testing.MultiKeyRequests.base64;
import static dev.kvlab.testing.MultiKeyRequests.batch;
import static dev.kvlab.testing.MultiKeyRequests.chunks;
import static dev.kvlab.testing.MultiKeyRequests.deleteOp;
import static dev.kvlab.testing.MultiKeyRequests.keys;
import static dev.kvlab.testing.MultiKeyRequests.lines;
import static dev.kvlab.testing.MultiKeyRequests.post;
import static dev.kvlab.testing.MultiKeyRequests.putOp;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.testing.KvClient;
import dev.kvlab.testing.RawHttp;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The multi-get and the batch of writes on a cluster of one, with small limits to reach them. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"kvlab.api.multi-key.max-keys=50", "kvlab.api.multi-key.max-batch-ops=20", "kvlab.api.max-value-size=1KB"})
class MultiKeyApiTest {

    @DynamicPropertySource
    static void storage(DynamicPropertyRegistry registry) throws Exception {
        var dir = Files.createTempDirectory("kvlab-multikey-test");
        registry.add("kvlab.storage.dir", dir::toString);
    }

    @LocalServerPort
    int port;

    KvClient client;

    @BeforeEach
    void client() {
        client = KvClient.onPort(port);
    }

    @Test
    void multiGetAnswersTheFoundKeysInTheOrderAskedOneChunkEachAndLeavesOutAbsentOnes() throws Exception {
        client.put("mg-a", "1");
        client.put("mg-b", "2");
        client.put("mg-c", "3");
        client.delete("mg-c");

        RawHttp.Response response = post(port, "/v0/entities/get", keys("mg-c", "mg-b", "mg-none", "mg-a", "mg-b"));

        assertThat(response.status()).isEqualTo(200);
        assertThat(response.headers()).containsEntry("transfer-encoding", "chunked");
        assertThat(chunks(response)).as("in the order asked, a duplicate answered each time, deleted and absent keys left out")
                .containsExactly("mg-b\n2", "mg-a\n1", "mg-b\n2");
    }

    @Test
    void multiGetInNdjsonCarriesEachKeysStatus() throws Exception {
        client.put("mgj-1", new byte[] {0, 1, 2});
        client.put("mgj-2", new byte[0]);

        RawHttp.Response response = post(port, "/v0/entities/get", keys("mgj-2", "mgj-missing", "mgj-1"), NDJSON);

        assertThat(response.status()).isEqualTo(200);
        assertThat(response.headers().get("content-type")).startsWith("application/x-ndjson");
        assertThat(lines(response)).containsExactly(
                "{\"key\":\"" + base64("mgj-2") + "\",\"status\":200,\"value\":\"\"}",
                "{\"key\":\"" + base64("mgj-missing") + "\",\"status\":404}",
                "{\"key\":\"" + base64("mgj-1") + "\",\"status\":200,\"value\":\"" + Base64.getEncoder().encodeToString(new byte[] {0, 1, 2}) + "\"}");
    }

    @Test
    void multiGetKeysAreTheLinesBytesExactly() throws Exception {
        client.put("mg-é €", "utf8");
        client.put("mg-cr\r", "cr");

        RawHttp.Response response = post(port, "/v0/entities/get", "mg-é €\nmg-cr\r\nmg-cr".getBytes(StandardCharsets.UTF_8));

        assertThat(chunks(response)).containsExactly("mg-é €\nutf8", "mg-cr\r\ncr");
    }

    @Test
    void badMultiGetsAre400AndTooManyKeysAre413() throws Exception {
        assertStatus(post(port, "/v0/entities/get", new byte[0]), 400, "no keys");
        assertStatus(post(port, "/v0/entities/get", "\n".getBytes()), 400, "no keys");
        assertStatus(post(port, "/v0/entities/get", "a\n\nb\n".getBytes()), 400, "line 2 of the body is empty");
        assertStatus(post(port, "/v0/entities/get", ("a\n" + "k".repeat(1025) + "\n").getBytes()), 400, "line 2", "1025 bytes");
        assertStatus(post(port, "/v0/entities/get?replicas=2/2", keys("a")), 400, "cluster has 1 node");
        assertStatus(post(port, "/v0/entities/get?replicas=2/1", keys("a")), 400, "ack must not be greater than from");

        List<String> fifty = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            fifty.add("many-" + i);
        }
        assertThat(post(port, "/v0/entities/get", keys(fifty.toArray(String[]::new))).status()).as("the limit itself").isEqualTo(200);
        fifty.add("one-more");
        assertStatus(post(port, "/v0/entities/get", keys(fifty.toArray(String[]::new))), 413, "more than 50 keys", "kvlab.api.multi-key.max-keys");
        byte[] longBody = ("k".repeat(1024) + "\n").repeat(60).getBytes();
        assertStatus(post(port, "/v0/entities/get", longBody), 413, "the list of keys is larger than the limit of 51250 bytes");
    }

    @Test
    void multiGetByQueryAnswersWhatThePostWithTheSameKeysAnswers() throws Exception {
        client.put("mgq-a", "1");
        client.put("mgq b", new byte[] {0, (byte) 0xFF});
        client.put("mgq-é", "utf8");
        assertThat(client.send("PUT", "/v0/entity?id=mgq%FF", BodyPublishers.ofString("binary")).statusCode()).isEqualTo(201);
        client.put("mgq-gone", "x");
        client.delete("mgq-gone");
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (String key : List.of("mgq-gone", "mgq b", "mgq-none", "mgq-é")) {
            body.writeBytes((key + "\n").getBytes(StandardCharsets.UTF_8));
        }
        body.writeBytes(new byte[] {'m', 'g', 'q', '-', 'a', '\n', 'm', 'g', 'q', (byte) 0xFF, '\n', 'm', 'g', 'q', '-', 'a', '\n'});
        String query = "?id=mgq-gone&id=mgq+b&id=mgq-none&id=mgq-%C3%A9&id=mgq%2Da&id=mgq%FF&id=mgq-a";

        for (String[] headers : List.of(new String[0], new String[] {NDJSON})) {
            RawHttp.Response posted = post(port, "/v0/entities/get", body.toByteArray(), headers);
            RawHttp.Response got = RawHttp.get(port, "/v0/entities/get" + query, headers);

            assertThat(posted.status()).isEqualTo(200);
            assertThat(got.status()).isEqualTo(200);
            assertThat(got.headers().get("content-type")).isEqualTo(posted.headers().get("content-type"));
            assertThat(got.headers()).containsEntry("transfer-encoding", "chunked");
            assertThat(got.chunks()).as("the same chunks, byte for byte").hasSameSizeAs(posted.chunks());
            for (int i = 0; i < got.chunks().size(); i++) {
                assertThat(got.chunks().get(i)).isEqualTo(posted.chunks().get(i));
            }
        }
        assertThat(chunks(RawHttp.get(port, "/v0/entities/get" + query))).as("found keys in the order asked, duplicates kept")
                .containsExactly("mgq b\n\u0000\ufffd", "mgq-é\nutf8", "mgq-a\n1", "mgq\ufffd\nbinary", "mgq-a\n1");
        assertThat(lines(RawHttp.get(port, "/v0/entities/get" + query, NDJSON)).get(2))
                .isEqualTo("{\"key\":\"" + base64("mgq-none") + "\",\"status\":404}");
        assertThat(chunks(RawHttp.get(port, "/v0/entities/get?replicas=1/1&id=mgq-a"))).containsExactly("mgq-a\n1");
    }

    @Test
    void badMultiGetsByQueryAre400AndTooManyKeysAre413() throws Exception {
        assertStatus(RawHttp.get(port, "/v0/entities/get"), 400, "missing query parameter 'id'");
        assertStatus(RawHttp.get(port, "/v0/entities/get?replicas=1/1&ids=a"), 400, "missing query parameter 'id'");
        assertStatus(RawHttp.get(port, "/v0/entities/get?id=a&id="), 400, "id number 2 of the query is empty");
        assertStatus(RawHttp.get(port, "/v0/entities/get?id=a&id=" + "k".repeat(1025)), 400, "id number 2", "1025 bytes");
        assertStatus(RawHttp.get(port, "/v0/entities/get?id=a&id=" + "%41".repeat(1025)), 400, "id number 2", "1025 bytes after decoding");
        assertThat(RawHttp.get(port, "/v0/entities/get?id=" + "%41".repeat(1024)).status()).as("the longest key").isEqualTo(200);
        assertStatus(RawHttp.get(port, "/v0/entities/get?id=a&id=%4"), 400, "not a valid URI");
        assertStatus(RawHttp.get(port, "/v0/entities/get?id=%G1"), 400, "not a valid URI");
        assertStatus(RawHttp.get(port, "/v0/entities/get?id=a&replicas=2/2"), 400, "cluster has 1 node");
        assertStatus(RawHttp.get(port, "/v0/entities/get?id=a&replicas=2/1"), 400, "ack must not be greater than from");

        StringBuilder fifty = new StringBuilder("/v0/entities/get?id=many-0");
        for (int i = 1; i < 50; i++) {
            fifty.append("&id=many-").append(i);
        }
        assertThat(RawHttp.get(port, fifty.toString()).status()).as("the limit itself").isEqualTo(200);
        assertStatus(RawHttp.get(port, fifty + "&id=one-more"), 413, "more than 50 keys", "kvlab.api.multi-key.max-keys");
    }

    @Test
    void aRequestLineLongerThanTheServerTakesIs414WithAMessage() throws Exception {
        // server.netty.max-initial-line-length is 16KB: just over it, and far over it (the whole line sent before reading).
        for (int length : new int[] {16 * 1024 + 1, 64 * 1024, 8 * 1024 * 1024}) {
            StringBuilder target = new StringBuilder("/v0/entities/get?id=long-0");
            for (int i = 1; target.length() < length; i++) {
                target.append("&id=long-").append(i);
            }
            RawHttp.Response response = RawHttp.get(port, target.toString());
            assertStatus(response, 414, "request line", "server.netty.max-initial-line-length", "POST");
            assertThat(response.headers()).containsEntry("connection", "close");
        }
        assertThat(client.get("long-0").statusCode()).as("the node serves on").isEqualTo(404);
    }

    @Test
    void aPostListsItsKeysInTheBodyNotInTheQuery() throws Exception {
        assertStatus(post(port, "/v0/entities/get?id=a", keys("b")), 400, "in the body");
    }

    @Test
    void aBatchAppliesEachOperationAndAnswersEachInOrder() throws Exception {
        client.put("batch-old", "old");

        RawHttp.Response response = post(port, "/v0/entities/batch", batch(
                putOp("batch-1", "one".getBytes()),
                deleteOp("batch-old"),
                putOp("batch-2", new byte[] {(byte) 0xFF, 0}),
                putOp("batch-1", "one again".getBytes())));

        assertThat(response.status()).isEqualTo(200);
        assertThat(response.headers().get("content-type")).startsWith("application/x-ndjson");
        assertThat(lines(response)).containsExactly(
                "{\"key\":\"" + base64("batch-1") + "\",\"status\":201}",
                "{\"key\":\"" + base64("batch-old") + "\",\"status\":202}",
                "{\"key\":\"" + base64("batch-2") + "\",\"status\":201}",
                "{\"key\":\"" + base64("batch-1") + "\",\"status\":201}");
        assertThat(text(client.get("batch-1"))).as("a later operation on the same key wins").isEqualTo("one again");
        assertThat(client.get("batch-2").body()).containsExactly(0xFF, 0);
        assertThat(client.get("batch-old").statusCode()).isEqualTo(404);
    }

    @Test
    void aMalformedBatchIs400AndChangesNothing() throws Exception {
        client.put("untouched", "before");
        List<String> bad = List.of(
                "{\"op\":\"put\",\"key\":\"" + base64("untouched") + "\"}",
                "{\"op\":\"upsert\",\"key\":\"" + base64("untouched") + "\",\"value\":\"\"}",
                "{\"op\":\"put\",\"key\":\"not base64!\",\"value\":\"\"}",
                "{\"op\":\"put\",\"key\":\"\",\"value\":\"\"}",
                "{\"op\":\"delete\",\"key\":\"" + base64("untouched") + "\",\"value\":\"\"}",
                "{\"op\":\"delete\",\"key\":\"" + base64("untouched") + "\",\"ttl\":3}",
                "[\"put\"]",
                "{\"op\":\"put\",\"key\":\"" + base64("untouched") + "\"",
                "");
        for (String line : bad) {
            RawHttp.Response response = post(port, "/v0/entities/batch",
                    batch(putOp("applied-too-soon", "x".getBytes()), deleteOp("untouched"), line, putOp("after", "y".getBytes())));
            assertStatus(response, 400, "line 3 of the batch");
        }
        assertStatus(post(port, "/v0/entities/batch", new byte[0]), 400, "no operations");
        assertThat(text(client.get("untouched"))).isEqualTo("before");
        assertThat(client.get("applied-too-soon").statusCode()).isEqualTo(404);
        assertThat(client.get("after").statusCode()).isEqualTo(404);
    }

    @Test
    void aBatchOverItsLimitsIs413AndChangesNothing() throws Exception {
        String[] ops = new String[21];
        for (int i = 0; i < ops.length; i++) {
            ops[i] = putOp("too-many-" + i, "v".getBytes());
        }
        assertStatus(post(port, "/v0/entities/batch", batch(ops)), 413, "more than 20 operations", "kvlab.api.multi-key.max-batch-ops");
        assertStatus(post(port, "/v0/entities/batch", batch(putOp("too-large-0", "v".getBytes()), putOp("too-large", new byte[1025]))),
                413, "line 2", "kvlab.api.max-value-size");
        assertThat(client.get("too-many-0").statusCode()).isEqualTo(404);
        assertThat(client.get("too-large-0").statusCode()).isEqualTo(404);

        assertThat(post(port, "/v0/entities/batch", batch(putOp("largest", new byte[1024]))).status()).isEqualTo(200);
        assertThat(client.get("largest").body()).hasSize(1024);
    }

    @Test
    void otherMethodsOnTheNewPathsAre405() {
        for (String method : List.of("GET", "PUT", "DELETE")) {
            HttpResponse<byte[]> response = client.send(method, "/v0/entities/batch", BodyPublishers.noBody());
            assertThat(response.statusCode()).as(method).isEqualTo(405);
            assertThat(response.headers().firstValue("allow")).hasValue("POST");
        }
        for (String method : List.of("HEAD", "PUT", "DELETE")) {
            HttpResponse<byte[]> response = client.send(method, "/v0/entities/get?id=a", BodyPublishers.noBody());
            assertThat(response.statusCode()).as(method).isEqualTo(405);
            assertThat(response.headers().firstValue("allow")).hasValue("GET, POST");
        }
    }


    private static void assertStatus(RawHttp.Response response, int status, String... message) {
        String body = new String(response.body(), StandardCharsets.UTF_8);
        assertThat(response.status()).as(body).isEqualTo(status);
        assertThat(body).contains(message);
    }
}

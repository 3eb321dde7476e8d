package dev.kvlab.it;

import static dev.kvlab.it.fixture.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.it.fixture.KvClient;
import dev.kvlab.it.fixture.KvlabCluster;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

/** The API contract through one node in a container of the image, reached on its mapped port. */
@Testcontainers
class SingleNodeApiIT {

    @Container
    static final KvlabCluster cluster = KvlabCluster.ofSize(1);

    private KvClient node;

    @BeforeEach
    void client() {
        node = cluster.client(0);
    }

    @Test
    void answersStatus() {
        assertThat(node.status().statusCode()).isEqualTo(200);
    }

    @Test
    void putGetDeleteGet() {
        assertThat(node.put("greeting", "hello").statusCode()).isEqualTo(201);

        HttpResponse<byte[]> read = node.get("greeting");
        assertThat(read.statusCode()).isEqualTo(200);
        assertThat(text(read)).isEqualTo("hello");

        assertThat(node.delete("greeting").statusCode()).isEqualTo(202);
        assertThat(node.get("greeting").statusCode()).isEqualTo(404);
    }

    @Test
    void aPutReplacesTheValue() {
        node.put("replaced", "first");
        assertThat(node.put("replaced", "second").statusCode()).isEqualTo(201);
        assertThat(text(node.get("replaced"))).isEqualTo("second");
    }

    @Test
    void keysAndValuesAreBytes() {
        byte[] value = {0, 1, 2, (byte) 0xff, '\n', 0};
        assertThat(node.put("ключ с пробелом", value, null).statusCode()).isEqualTo(201);
        HttpResponse<byte[]> read = node.get("ключ с пробелом");
        assertThat(read.statusCode()).isEqualTo(200);
        assertThat(read.body()).isEqualTo(value);
    }

    @Test
    void anEmptyValueIsAValue() {
        assertThat(node.put("empty", new byte[0], null).statusCode()).isEqualTo(201);
        HttpResponse<byte[]> read = node.get("empty");
        assertThat(read.statusCode()).isEqualTo(200);
        assertThat(read.body()).isEmpty();
    }

    @Test
    void anAbsentKeyIs404AndDeletingItIsFine() {
        assertThat(node.get("never-written").statusCode()).isEqualTo(404);
        assertThat(node.delete("never-written").statusCode()).isEqualTo(202);
    }

    @Test
    void badRequestsAre400WithAReason() {
        assertBadRequest(node.send("GET", "/v0/entity", HttpRequest.BodyPublishers.noBody()));
        assertBadRequest(node.send("GET", "/v0/entity?id=", HttpRequest.BodyPublishers.noBody()));
        assertBadRequest(node.get("k", "two/one"));
        assertBadRequest(node.get("k", "0/1"));
        assertBadRequest(node.get("k", "2/1"));
        // A cluster of one: from cannot exceed 1.
        assertBadRequest(node.put("k", "v", "1/2"));
        assertThat(node.get("k").statusCode()).as("a bad request stores nothing").isEqualTo(404);
    }

    @Test
    void otherMethodsAre405() {
        HttpResponse<byte[]> post = node.send("POST", "/v0/entity?id=k", HttpRequest.BodyPublishers.ofString("v"));
        assertThat(post.statusCode()).isEqualTo(405);
    }

    @Test
    void aRangeStreamsKeysInOrder() {
        for (String key : new String[] {"range-c", "range-a", "range-b", "rangf"}) {
            node.put(key, "value of " + key);
        }
        node.delete("range-b");

        HttpResponse<byte[]> range = node.range("range-", "rangf");
        assertThat(range.statusCode()).isEqualTo(200);
        // One chunk per entry, "<key>\n<value>"; the client sees the chunks joined.
        assertThat(text(range)).isEqualTo("range-a\nvalue of range-a" + "range-c\nvalue of range-c");
    }

    private static void assertBadRequest(HttpResponse<byte[]> response) {
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(new String(response.body(), StandardCharsets.UTF_8)).isNotBlank();
    }
}

package dev.kvlab.api;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.testing.KvClient;
import dev.kvlab.testing.RawHttp;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** ETag, If-Match and If-None-Match on {@code /v0/entity}, as RFC 9110 §13 has them, on a node of its own. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ConditionalRequestsTest {

    @DynamicPropertySource
    static void storage(DynamicPropertyRegistry registry) throws Exception {
        var dir = Files.createTempDirectory("kvlab-conditional-test");
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

    private HttpResponse<byte[]> get(String key, String... headers) {
        return client.send("GET", KvClient.entity(key, null), BodyPublishers.noBody(), headers);
    }

    private HttpResponse<byte[]> put(String key, String value, String... headers) {
        return client.send("PUT", KvClient.entity(key, null), BodyPublishers.ofString(value), headers);
    }

    private HttpResponse<byte[]> delete(String key, String... headers) {
        return client.send("DELETE", KvClient.entity(key, null), BodyPublishers.noBody(), headers);
    }

    private String etagOf(String key) {
        HttpResponse<byte[]> found = get(key);
        assertThat(found.statusCode()).isEqualTo(200);
        return found.headers().firstValue("etag").orElseThrow();
    }

    @Test
    void aValueHasAStrongETagThatStaysUntilTheNextWrite() {
        client.put("tagged", "one");
        HttpResponse<byte[]> first = get("tagged");
        String tag = first.headers().firstValue("etag").orElseThrow();

        assertThat(tag).as("strong, quoted, the version in hex").matches("\"[0-9a-f]+-[0-9a-f]+\"");
        assertThat(etagOf("tagged")).as("the same on every read").isEqualTo(tag);
        HttpResponse<byte[]> head = client.send("HEAD", KvClient.entity("tagged", null), BodyPublishers.noBody());
        assertThat(head.headers().firstValue("etag")).as("HEAD answers it too").hasValue(tag);

        client.put("tagged", "one");
        assertThat(etagOf("tagged")).as("a new write of the same bytes is a new write").isNotEqualTo(tag);
        client.delete("tagged");
        HttpResponse<byte[]> gone = get("tagged");
        assertThat(gone.statusCode()).isEqualTo(404);
        assertThat(gone.headers().firstValue("etag")).as("a 404 has no tag").isEmpty();
    }

    @Test
    void ifNoneMatchWithTheCurrentTagIs304WithoutABody() throws Exception {
        client.put("cached", "value");
        String tag = etagOf("cached");

        for (String ifNoneMatch : new String[] {tag, "\"other\", " + tag, "W/" + tag, "*"}) {
            HttpResponse<byte[]> notModified = get("cached", "If-None-Match", ifNoneMatch);
            assertThat(notModified.statusCode()).as(ifNoneMatch).isEqualTo(304);
            assertThat(notModified.body()).isEmpty();
            assertThat(notModified.headers().firstValue("etag")).hasValue(tag);
        }
        HttpResponse<byte[]> stale = get("cached", "If-None-Match", "\"1-1\"");
        assertThat(stale.statusCode()).isEqualTo(200);
        assertThat(text(stale)).isEqualTo("value");
        HttpResponse<byte[]> head = client.send("HEAD", KvClient.entity("cached", null), BodyPublishers.noBody(), "If-None-Match", tag);
        assertThat(head.statusCode()).isEqualTo(304);
        assertThat(get("never-cached", "If-None-Match", "*").statusCode()).as("no value: 404, conditions or not").isEqualTo(404);
        RawHttp.Response raw = RawHttp.get(port, KvClient.entity("cached", null), "If-None-Match: " + tag);
        assertThat(raw.status()).isEqualTo(304);
        assertThat(raw.headers()).as("a 304 frames no body").doesNotContainKey("transfer-encoding").containsEntry("etag", tag);
        assertThat(raw.body()).isEmpty();
    }

    @Test
    void ifMatchWithTheCurrentTagWritesAndAnswersTheNewTag() {
        client.put("counter", "1");
        String tag = etagOf("counter");

        HttpResponse<byte[]> written = put("counter", "2", "If-Match", tag);
        assertThat(written.statusCode()).isEqualTo(201);
        String newTag = written.headers().firstValue("etag").orElseThrow();
        assertThat(newTag).isNotEqualTo(tag);
        assertThat(etagOf("counter")).as("the 201's tag is the value's").isEqualTo(newTag);
        assertThat(text(get("counter"))).isEqualTo("2");

        HttpResponse<byte[]> lost = put("counter", "lost", "If-Match", tag);
        assertThat(lost.statusCode()).as("the tag the first writer used is gone").isEqualTo(412);
        assertThat(text(lost)).contains("If-Match").contains(newTag);
        assertThat(text(get("counter"))).isEqualTo("2");

        assertThat(put("counter", "3", "If-Match", "\"x\", " + newTag).statusCode()).as("any listed tag").isEqualTo(201);
        assertThat(put("counter", "4", "If-Match", "*").statusCode()).as("* while a value exists").isEqualTo(201);
        assertThat(text(get("counter"))).isEqualTo("4");
    }

    @Test
    void ifMatchComparesStronglyAWeakTagNeverMatches() {
        client.put("weak", "v");
        String tag = etagOf("weak");

        HttpResponse<byte[]> weak = put("weak", "w", "If-Match", "W/" + tag);
        assertThat(weak.statusCode()).isEqualTo(412);
        assertThat(text(weak)).contains("weak");
        assertThat(text(get("weak"))).isEqualTo("v");
        assertThat(get("weak", "If-Match", "W/" + tag).statusCode()).as("a read's If-Match too").isEqualTo(412);
        assertThat(get("weak", "If-Match", tag).statusCode()).isEqualTo(200);
    }

    @Test
    void ifMatchOnAnAbsentOrDeletedKeyIs412() {
        assertThat(put("absent", "v", "If-Match", "*").statusCode()).isEqualTo(412);
        assertThat(get("absent").statusCode()).isEqualTo(404);
        client.put("deleted", "v");
        String tag = etagOf("deleted");
        client.delete("deleted");
        assertThat(put("deleted", "v", "If-Match", tag).statusCode()).as("the tag of a deleted value").isEqualTo(412);
        assertThat(put("deleted", "v", "If-Match", "*").statusCode()).isEqualTo(412);
        assertThat(get("deleted").statusCode()).isEqualTo(404);
    }

    @Test
    void ifNoneMatchStarCreatesOnlyWhenAbsent() {
        HttpResponse<byte[]> created = put("once", "first", "If-None-Match", "*");
        assertThat(created.statusCode()).isEqualTo(201);
        assertThat(created.headers().firstValue("etag")).isPresent();

        HttpResponse<byte[]> second = put("once", "second", "If-None-Match", "*");
        assertThat(second.statusCode()).isEqualTo(412);
        assertThat(text(second)).contains("If-None-Match");
        assertThat(text(get("once"))).isEqualTo("first");

        client.delete("once");
        assertThat(put("once", "again", "If-None-Match", "*").statusCode()).as("a deleted key is absent").isEqualTo(201);
        assertThat(text(get("once"))).as("and the new value is newer than the tombstone").isEqualTo("again");
        assertThat(put("once", "x", "If-None-Match", etagOf("once")).statusCode()).as("a listed current tag").isEqualTo(412);
    }

    @Test
    void deleteWithIfMatchDeletesOnlyTheValueItNames() {
        client.put("doomed", "v1");
        String old = etagOf("doomed");
        client.put("doomed", "v2");

        HttpResponse<byte[]> refused = delete("doomed", "If-Match", old);
        assertThat(refused.statusCode()).isEqualTo(412);
        assertThat(text(get("doomed"))).isEqualTo("v2");

        assertThat(delete("doomed", "If-Match", etagOf("doomed")).statusCode()).isEqualTo(202);
        assertThat(get("doomed").statusCode()).isEqualTo(404);
        assertThat(delete("doomed", "If-Match", "*").statusCode()).as("nothing left to match").isEqualTo(412);
        assertThat(delete("never-there", "If-None-Match", "*").statusCode()).isEqualTo(202);
    }

    @Test
    void aMalformedOrUnsupportedConditionIs400AndWritesNothing() {
        client.put("guarded", "kept");
        for (String[] header : new String[][] {
                {"If-Match", "not-quoted"}, {"If-Match", "\"open"}, {"If-Match", "*, \"a\""}, {"If-Match", ","},
                {"If-None-Match", "W/x"}, {"If-Match", "\"a\" \"b\""},
                {"If-Unmodified-Since", "Sat, 29 Oct 1994 19:43:31 GMT"}, {"If-Modified-Since", "Sat, 29 Oct 1994 19:43:31 GMT"}}) {
            HttpResponse<byte[]> put = put("guarded", "overwritten", header);
            assertThat(put.statusCode()).as("PUT %s: %s", header[0], header[1]).isEqualTo(400);
            assertThat(text(put)).contains(header[0]);
            assertThat(delete("guarded", header).statusCode()).as("DELETE %s: %s", header[0], header[1]).isEqualTo(400);
        }
        assertThat(text(get("guarded"))).isEqualTo("kept");
        assertThat(get("guarded", "If-None-Match", "nope").statusCode()).as("a read's malformed condition").isEqualTo(400);
        assertThat(get("guarded", "If-Modified-Since", "Sat, 29 Oct 1994 19:43:31 GMT").statusCode())
                .as("a read may ignore a date condition: it answers in full").isEqualTo(200);
    }

    @Test
    void withoutConditionsWritesAnswerAsBefore() {
        HttpResponse<byte[]> put = client.put("plain", "v");
        assertThat(put.statusCode()).isEqualTo(201);
        assertThat(put.headers().firstValue("etag")).as("an unconditional PUT answers as the course's API").isEmpty();
        assertThat(put.body()).isEmpty();
        HttpResponse<byte[]> delete = client.delete("plain");
        assertThat(delete.statusCode()).isEqualTo(202);
        assertThat(delete.headers().firstValue("etag")).isEmpty();
    }

    @Test
    void preconditionFailuresAnd304sAreCountedByStatus() {
        client.put("metered-condition", "v");
        String tag = etagOf("metered-condition");
        get("metered-condition", "If-None-Match", tag);
        put("metered-condition", "w", "If-Match", "\"stale\"");

        // An answer is counted once it has been sent, so the scrape may come a moment before it.
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(
                text(KvClient.onPort(managementPort).send("GET", "/actuator/prometheus", BodyPublishers.noBody())))
                .contains("kvlab_requests_seconds_count{application=\"kvlab\",operation=\"get\",status=\"304\"}")
                .contains("kvlab_requests_seconds_count{application=\"kvlab\",operation=\"put\",status=\"412\"}"));
    }
}

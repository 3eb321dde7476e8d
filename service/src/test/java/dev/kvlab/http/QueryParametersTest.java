package dev.kvlab.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class QueryParametersTest {

    @Test
    void percentEscapesDecodeToRawBytes() {
        QueryParameters query = QueryParameters.parse("id=%FF%00a%2Fb");

        assertThat(query.bytes("id")).containsExactly(0xFF, 0x00, 'a', '/', 'b');
    }

    @Test
    void plusIsASpaceAndUtf8EscapesMakeText() {
        QueryParameters query = QueryParameters.parse("id=%D0%BA%D0%BB+1");

        assertThat(query.text("id")).isEqualTo("кл 1");
    }

    @Test
    void rawNonAsciiCharactersAreTakenAsUtf8() {
        assertThat(QueryParameters.parse("id=ключ😀").text("id")).isEqualTo("ключ😀");
    }

    @Test
    void theFirstOfRepeatedParametersWinsAndOthersAreKept() {
        QueryParameters query = QueryParameters.parse("id=1&replicas=2/3&id=2&flag&empty=");

        assertThat(query.text("id")).isEqualTo("1");
        assertThat(query.text("replicas")).isEqualTo("2/3");
        assertThat(query.bytes("flag")).isEmpty();
        assertThat(query.bytes("empty")).isEmpty();
        assertThat(query.bytes("missing")).isNull();
    }

    @Test
    void allOccurrencesOfAParameterComeDecodedInTheOrderSent() {
        QueryParameters query = QueryParameters.parse("id=b&replicas=1/1&id=%FF%00&id=&id=a+c&id=b&ids=x");

        assertThat(query.all("id")).containsExactly(new byte[] {'b'}, new byte[] {(byte) 0xFF, 0}, new byte[0], new byte[] {'a', ' ', 'c'},
                new byte[] {'b'});
        assertThat(query.all("missing")).isEmpty();
        assertThat(QueryParameters.parse(null).all("id")).isEmpty();
    }

    @Test
    void anEqualsSignInAValueBelongsToTheValue() {
        assertThat(QueryParameters.parse("id=a=b").text("id")).isEqualTo("a=b");
    }

    @Test
    void malformedEscapesAreBadRequests() {
        assertThatThrownBy(() -> QueryParameters.parse("id=abc%2")).isInstanceOf(BadRequestException.class);
        assertThatThrownBy(() -> QueryParameters.parse("id=%G1")).isInstanceOf(BadRequestException.class)
                .hasMessageContaining("%G1");
        assertThatThrownBy(() -> QueryParameters.parse("id=%")).isInstanceOf(BadRequestException.class);
    }

    @Test
    void anAbsentQueryHasNoParameters() {
        assertThat(QueryParameters.parse(null).bytes("id")).isNull();
        assertThat(QueryParameters.parse("").bytes("id")).isNull();
    }
}

package dev.kvlab.http;

import org.springframework.util.unit.DataSize;

/** A body is bigger than its limit, by default the value's {@code kvlab.api.max-value-size} (413). */
public class PayloadTooLargeException extends RuntimeException {

    public PayloadTooLargeException(DataSize limit) {
        this("the value", limit, "kvlab.api.max-value-size");
    }

    /** {@code what} is too large: {@code limit} is the setting named {@code setting}. */
    public PayloadTooLargeException(String what, DataSize limit, String setting) {
        super(what + " is larger than the limit of " + limit.toBytes() + " bytes (" + setting + ")");
    }

    /** A request over a limit that its message explains. */
    public PayloadTooLargeException(String message) {
        super(message);
    }
}

package dev.kvlab.http;

import org.springframework.util.unit.DataSize;

/** The value is bigger than {@code kvlab.api.max-value-size} (413). */
public class PayloadTooLargeException extends RuntimeException {

    public PayloadTooLargeException(DataSize limit) {
        super("the value is larger than the limit of " + limit.toBytes() + " bytes (kvlab.api.max-value-size)");
    }
}

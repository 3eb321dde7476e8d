package dev.kvlab.http;

/** The node streams as many ranges as it admits at once: 503. */
public class TooManyStreamsException extends RuntimeException {

    public TooManyStreamsException(String message) {
        super(message);
    }
}

package dev.kvlab.http;

/** The request is malformed; its message tells the client what was wrong (400). */
public class BadRequestException extends RuntimeException {

    public BadRequestException(String message) {
        super(message);
    }
}

package dev.kvlab.http;

/** A conditional request's condition did not hold (412); its message says which one and why. */
public class PreconditionFailedException extends RuntimeException {

    public PreconditionFailedException(String message) {
        super(message);
    }
}

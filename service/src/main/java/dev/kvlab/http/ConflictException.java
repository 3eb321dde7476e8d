package dev.kvlab.http;

/** The request does not fit the state this node is in (409), such as a repair by another topology. */
public class ConflictException extends RuntimeException {

    public ConflictException(String message) {
        super(message);
    }
}

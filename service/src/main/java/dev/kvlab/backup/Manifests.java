package dev.kvlab.backup;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/** Manifests as JSON: indented for people, and read strictly (a field kvlab does not know is an error). */
public final class Manifests {

    private static final JsonMapper JSON = JsonMapper.builder()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .build();

    private Manifests() {
    }

    public static byte[] write(Object manifest) {
        return JSON.writeValueAsBytes(manifest);
    }

    /** The manifest in {@code json}; {@link IllegalArgumentException} naming {@code what} when it is not one. */
    public static <T> T read(byte[] json, Class<T> type, String what) {
        try {
            T manifest = JSON.readValue(json, type);
            if (manifest == null) {
                throw new IllegalArgumentException(what + " is empty");
            }
            return manifest;
        } catch (JacksonException e) {
            throw new IllegalArgumentException(what + " is not a kvlab backup manifest: " + e.getOriginalMessage(), e);
        }
    }
}

package dev.kvlab.api;

import dev.kvlab.storage.Version;

/**
 * The strong entity tag (RFC 9110 §8.8.3) of a key's value: its record's version, as
 * {@code "<timestamp hex>-<node hex>"}. A version names one write (two records with the same
 * version are the same write), so equal tags mean the same value, byte for byte.
 */
final class EntityTag {

    private EntityTag() {
    }

    /** The tag as it goes in an {@code ETag} header: the opaque part in double quotes. */
    static String of(Version version) {
        return '"' + opaque(version) + '"';
    }

    /** The part between the quotes, which is what tags are compared by. */
    static String opaque(Version version) {
        return Long.toHexString(version.timestamp()) + '-' + Integer.toHexString(version.node());
    }
}

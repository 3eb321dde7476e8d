package dev.kvlab.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether a shared secret (the cluster secret, the management admin token) is hard enough to guess.
 * The rule, as the operations guide states it: at least {@value #MIN_BYTES} bytes, and an estimated
 * strength of at least {@value #MIN_BITS} bits, where each character of the secret's shortest
 * repeating unit counts log2(the number of distinct characters in the secret) bits. So 16 equal
 * characters count 0 bits, "abab…" 1 bit, "abcabc…" as much as "abc"; 64 random hex digits count
 * 256 bits, a UUID about 140. It is an estimate that catches placeholders and typing patterns, not
 * a proof: a secret should come from a random source.
 */
public final class SecretStrength {

    /** A shorter secret is too easy to guess. */
    public static final int MIN_BYTES = 16;

    /** The least estimated strength of a secret. */
    public static final int MIN_BITS = 64;

    /** How to make a good secret, for the messages. */
    public static final String HOW_TO_MAKE_ONE = "for example 32 random bytes in hex: head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n'";

    private SecretStrength() {
    }

    /** Why {@code secret} is too weak, naming it as {@code what}; null when it is strong enough. */
    public static String weakness(String what, byte[] secret) {
        if (secret.length < MIN_BYTES) {
            return what + " is " + secret.length + " bytes long; it must have at least " + MIN_BYTES + " (" + HOW_TO_MAKE_ONE + ")";
        }
        double bits = estimatedBits(secret);
        if (bits < MIN_BITS) {
            return what + " is too easy to guess: its " + distinct(secret) + " distinct characters, repeated in a unit of "
                    + period(secret) + ", make about " + (int) bits + " bits, and it must have at least " + MIN_BITS
                    + " (" + HOW_TO_MAKE_ONE + ")";
        }
        return null;
    }

    /** Checks a secret given as text; throws with the reason when it is too weak. */
    public static byte[] require(String what, String secret) {
        byte[] bytes = secret.getBytes(StandardCharsets.UTF_8);
        String weakness = weakness(what, bytes);
        if (weakness != null) {
            throw new IllegalArgumentException(weakness);
        }
        return bytes;
    }

    /**
     * A secret given as {@code text} or in {@code file} (its text, surrounding white space ignored),
     * checked as {@link #require} does; null when there is none. {@code fileProperty} names the
     * file's property in the message when it cannot be read.
     */
    public static byte[] read(String what, String text, Path file, String fileProperty) {
        if (file != null) {
            try {
                text = Files.readString(file);
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read " + fileProperty + " " + file + ": " + e.getMessage(), e);
            }
        }
        if (text == null || text.isBlank()) {
            return null;
        }
        return require(what, text.strip());
    }

    /** The unit's length times log2 of the alphabet the secret draws from. */
    static double estimatedBits(byte[] secret) {
        int distinct = distinct(secret);
        return distinct < 2 ? 0 : period(secret) * (Math.log(distinct) / Math.log(2));
    }

    private static int distinct(byte[] secret) {
        boolean[] seen = new boolean[256];
        int distinct = 0;
        for (byte b : secret) {
            if (!seen[b & 0xff]) {
                seen[b & 0xff] = true;
                distinct++;
            }
        }
        return distinct;
    }

    /** The length of the shortest prefix that, repeated, makes the whole secret (its tail may be cut short). */
    static int period(byte[] secret) {
        // The prefix function of Knuth-Morris-Pratt: the longest proper border gives the shortest period.
        int[] border = new int[secret.length];
        for (int i = 1, k = 0; i < secret.length; i++) {
            while (k > 0 && secret[i] != secret[k]) {
                k = border[k - 1];
            }
            if (secret[i] == secret[k]) {
                k++;
            }
            border[i] = k;
        }
        return secret.length - border[secret.length - 1];
    }
}

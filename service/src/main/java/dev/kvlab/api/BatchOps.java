package dev.kvlab.api;

import dev.kvlab.http.BadRequestException;
import dev.kvlab.http.PayloadTooLargeException;
import dev.kvlab.http.RequestParameters;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.storage.Record;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The operations of a batch body: NDJSON, one object per line, {@code {"op":"put","key":"<base64>","value":"<base64>"}}
 * or {@code {"op":"delete","key":"<base64>"}}, keys and values in standard base64 as the framed range
 * format writes them. The whole body is checked before anything is applied: any malformed line is a
 * 400 that names it, too many operations or a value over {@code kvlab.api.max-value-size} a 413. The
 * values are decoded into the arrays their records will own, held on the request's lease.
 */
final class BatchOps {

    /** One operation of a batch; {@code valueArray} (from {@link Record#newValueArray}) is null for a delete. */
    record Op(byte[] key, byte[] valueArray) {

        boolean isPut() {
            return valueArray != null;
        }
    }

    private static final JsonMapper JSON = JsonMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    private BatchOps() {
    }

    /** The operations of {@code body[from..]}, in order; their decoded values are held on {@code lease}. */
    static List<Op> parse(byte[] body, int from, int maxOps, long maxValueSize, MemoryBudget.Lease lease) {
        List<Op> ops = new ArrayList<>();
        int line = 1;
        for (int start = from; start < body.length; line++) {
            int newline = start;
            while (newline < body.length && body[newline] != '\n') {
                newline++;
            }
            if (isBlank(body, start, newline)) {
                throw new BadRequestException("line " + line + " of the batch is empty: one operation per line");
            }
            if (ops.size() == maxOps) {
                throw new PayloadTooLargeException("the batch has more than " + maxOps + " operations (kvlab.api.multi-key.max-batch-ops)");
            }
            ops.add(op(body, start, newline - start, line, maxValueSize, lease));
            start = newline + 1;
        }
        if (ops.isEmpty()) {
            throw new BadRequestException("the batch has no operations: send one JSON object per line");
        }
        return ops;
    }

    private static Op op(byte[] body, int start, int length, int line, long maxValueSize, MemoryBudget.Lease lease) {
        JsonNode node;
        try {
            node = JSON.readTree(body, start, length);
        } catch (JacksonException malformed) {
            throw new BadRequestException("line " + line + " of the batch is not a JSON object: " + malformed.getOriginalMessage());
        }
        if (node == null || !node.isObject()) {
            throw new BadRequestException("line " + line + " of the batch is not a JSON object");
        }
        for (Iterator<Map.Entry<String, JsonNode>> fields = node.properties().iterator(); fields.hasNext(); ) {
            String name = fields.next().getKey();
            if (!name.equals("op") && !name.equals("key") && !name.equals("value")) {
                throw new BadRequestException("line " + line + " of the batch has an unknown field '" + name + "': expected op, key and value");
            }
        }
        String op = text(node, "op", line);
        byte[] key = base64(node, "key", line);
        if (key.length == 0 || key.length > RequestParameters.MAX_KEY_BYTES) {
            throw new BadRequestException("line " + line + " of the batch has a key of " + key.length + " bytes; keys are 1 to "
                    + RequestParameters.MAX_KEY_BYTES + " bytes");
        }
        return switch (op) {
            case "put" -> {
                byte[] value = base64(node, "value", line);
                if (value.length > maxValueSize) {
                    throw new PayloadTooLargeException("line " + line + " of the batch has a value of " + value.length
                            + " bytes, larger than the limit of " + maxValueSize + " bytes (kvlab.api.max-value-size)");
                }
                lease.hold(Record.HEADER_BYTES + value.length);
                byte[] array = Record.newValueArray(value.length);
                System.arraycopy(value, 0, array, Record.HEADER_BYTES, value.length);
                yield new Op(key, array);
            }
            case "delete" -> {
                if (node.has("value")) {
                    throw new BadRequestException("line " + line + " of the batch is a delete with a value");
                }
                yield new Op(key, null);
            }
            default -> throw new BadRequestException("line " + line + " of the batch has op '" + op + "': expected put or delete");
        };
    }

    private static String text(JsonNode node, String field, int line) {
        JsonNode value = node.get(field);
        if (value == null || !value.isString()) {
            throw new BadRequestException("line " + line + " of the batch needs \"" + field + "\" as a string");
        }
        return value.asString();
    }

    private static byte[] base64(JsonNode node, String field, int line) {
        String text = text(node, field, line);
        try {
            return Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException notBase64) {
            throw new BadRequestException("line " + line + " of the batch has a \"" + field + "\" that is not standard base64: " + notBase64.getMessage());
        }
    }

    private static boolean isBlank(byte[] body, int start, int end) {
        for (int i = start; i < end; i++) {
            if (body[i] != ' ' && body[i] != '\t' && body[i] != '\r') {
                return false;
            }
        }
        return true;
    }
}

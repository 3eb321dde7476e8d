package dev.kvlab.backup;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * The arguments of a command that the jar runs instead of a node ({@code restore}, {@code backups}):
 * its own options ({@code --name=value}, {@code --flag}), and {@code --kvlab.*} settings bound
 * with the environment's {@code KVLAB_*} variables as a node binds them (the command line wins),
 * without starting Spring.
 */
final class CommandLine {

    private final Map<String, String> options;
    private final Set<String> flags;
    private final Binder binder;

    private CommandLine(Map<String, String> options, Set<String> flags, Binder binder) {
        this.options = options;
        this.flags = flags;
        this.binder = binder;
    }

    /**
     * Reads {@code args}: {@code valued} options take {@code =value}, {@code flags} none; anything
     * else than those and {@code --kvlab.*=value} is refused.
     */
    static CommandLine parse(List<String> args, Set<String> valued, Set<String> flags, Map<String, String> environment) {
        Map<String, String> options = new HashMap<>();
        Set<String> given = new HashSet<>();
        Map<String, Object> properties = new LinkedHashMap<>();
        for (String arg : args) {
            if (!arg.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + arg + "'");
            }
            int equals = arg.indexOf('=');
            String name = arg.substring(2, equals < 0 ? arg.length() : equals);
            String value = equals < 0 ? null : arg.substring(equals + 1);
            if (name.startsWith("kvlab.")) {
                if (value == null) {
                    throw new IllegalArgumentException("--" + name + " needs a value: --" + name + "=...");
                }
                properties.put(name, value);
            } else if (valued.contains(name)) {
                if (value == null || value.isEmpty()) {
                    throw new IllegalArgumentException("--" + name + " needs a value: --" + name + "=...");
                }
                if (options.put(name, value) != null) {
                    throw new IllegalArgumentException("--" + name + " is given twice");
                }
            } else if (flags.contains(name)) {
                if (value != null) {
                    throw new IllegalArgumentException("--" + name + " takes no value");
                }
                given.add(name);
            } else {
                throw new IllegalArgumentException("unknown option --" + name);
            }
        }
        List<ConfigurationPropertySource> sources = new ArrayList<>();
        ConfigurationPropertySources.from(new MapPropertySource("commandLineArgs", properties)).forEach(sources::add);
        // Named as Spring names it, so KVLAB_BACKUP_S3_ACCESSKEY binds to kvlab.backup.s3.access-key.
        ConfigurationPropertySources.from(new SystemEnvironmentPropertySource(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, new HashMap<>(environment))).forEach(sources::add);
        return new CommandLine(options, given, new Binder(sources));
    }

    /** The option's value, or null when it was not given. */
    String option(String name) {
        return options.get(name);
    }

    String required(String name, String what) {
        String value = options.get(name);
        if (value == null) {
            throw new IllegalArgumentException("--" + name + "=" + what + " is missing");
        }
        return value;
    }

    int requiredInt(String name, String what) {
        String value = required(name, what);
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " is " + what + ", a whole number; got '" + value + "'");
        }
    }

    boolean flag(String name) {
        return flags.contains(name);
    }

    /** The settings under {@code prefix} as {@code type}, with its defaults where nothing is set. */
    <T> T bind(String prefix, Class<T> type) {
        try {
            return binder.bindOrCreate(prefix, Bindable.of(type));
        } catch (BindException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            String property = e.getProperty() == null ? prefix : e.getProperty().getName().toString();
            throw new IllegalArgumentException("cannot use " + property + ": " + rootMessage(cause), e);
        }
    }

    private static String rootMessage(Throwable e) {
        while (e.getCause() != null && e.getCause() != e) {
            e = e.getCause();
        }
        return e.getMessage();
    }
}

package dev.kvlab.tls;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when {@code kvlab.tls.replica-bundle} names a bundle, however it is spelled (an
 * environment variable KVLAB_TLS_REPLICABUNDLE too); an empty value is off.
 */
final class OnReplicaBundle implements Condition {

    @Override
    public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
        return Binder.get(context.getEnvironment()).bind("kvlab.tls.replica-bundle", String.class)
                .map(name -> !name.isBlank()).orElse(false);
    }
}

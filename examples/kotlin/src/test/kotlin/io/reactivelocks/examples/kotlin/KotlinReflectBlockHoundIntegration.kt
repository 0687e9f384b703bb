package io.reactivelocks.examples.kotlin

import reactor.blockhound.BlockHound
import reactor.blockhound.integration.BlockHoundIntegration

/**
 * Spring calls a `suspend` handler method through kotlin-reflect, which builds each class's
 * reflection data once, lazily, under a `ReentrantLock` (`DefaultSimpleLock`, an in-memory critical
 * section, no I/O). When two event loops handle the first requests at the same moment, one of them
 * parks on that lock for a moment and BlockHound reports `Unsafe#park`. Allow exactly that lock and
 * nothing else. (An application running BlockHound with suspend controllers needs the same allowance.)
 */
class KotlinReflectBlockHoundIntegration : BlockHoundIntegration {
    override fun applyTo(builder: BlockHound.Builder) {
        builder.allowBlockingCallsInside("kotlin.reflect.jvm.internal.impl.storage.DefaultSimpleLock", "lock")
    }
}

package io.reactivelocks.blocking;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.admin.LockAdmin;
import io.reactivelocks.election.LeaderElection;
import io.reactivelocks.election.Leadership;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.multi.MultiLease;
import io.reactivelocks.multi.MultiLock;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.window.WindowLock;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * The blocking facade is derived from core, not remembered: by reflection, every public instance
 * method of every core concept type (declared and default, inherited included, Object's left out;
 * static factories left out — the facade's entry is {@code of(core)}) must have a counterpart on the
 * facade type mapped to it, or an entry in {@link #EXCEPTIONS} saying why it cannot make sense
 * blocking. A method added to a core interface without either fails this test.
 *
 * <p><b>Name rules.</b> A core method {@code m} maps to a facade method of the same name, except:
 * {@code lost()} (a {@code Mono} that completes on loss) maps to {@code whenLost()} and {@code revoked()} to
 * {@code whenRevoked()} (each a {@code CompletionStage}). Overloads compare by name and parameter count: a facade overload must
 * take as many parameters as the core one — or one more when the core method returns a {@code Flux},
 * whose blocking form takes the per-element callback ({@link StreamBody}) or runs a body for the
 * stream's life. A core method that returns a core concept type (e.g. {@code LockStore.semaphores},
 * {@code ReadWriteLock.read}, {@code Leadership.lease}) must return the facade type mapped to it on
 * the facade; so a concept added to {@link LockStore} without a facade type fails too.
 */
class FacadeCoverageTest {

    /** Core concept type → its blocking facade type. */
    static final Map<Class<?>, Class<?>> FACADES = new LinkedHashMap<>();

    static {
        FACADES.put(LockStore.class, BlockingStore.class);
        FACADES.put(LockClient.class, BlockingLocks.class);
        FACADES.put(Lease.class, BlockingLease.class);
        FACADES.put(Semaphore.class, BlockingSemaphore.class);
        FACADES.put(ReadWriteLock.class, BlockingReadWriteLock.class);
        FACADES.put(ReadWriteLock.Access.class, BlockingReadWriteLock.Access.class);
        FACADES.put(MultiLock.class, BlockingMultiLock.class);
        FACADES.put(MultiLease.class, BlockingMultiLease.class);
        FACADES.put(WindowLock.class, BlockingWindowLock.class);
        FACADES.put(LeaderElection.class, BlockingLeaderElection.class);
        FACADES.put(Leadership.class, BlockingLeadership.class);
        FACADES.put(FencedValues.class, BlockingFencedValues.class);
        FACADES.put(TaskQueue.class, BlockingTaskQueue.class);
        FACADES.put(LockAdmin.class, BlockingAdmin.class);
    }

    /** Core name → facade name, where they differ. */
    static final Map<String, String> RENAMED = Map.of("lost", "whenLost", "revoked", "whenRevoked");

    /** {@code Type.method} → why the blocking facade has no counterpart. */
    static final Map<String, String> EXCEPTIONS = Map.of(
            "LockClient.withLockMany",
            "a streaming body: blocking code that produces many elements under the lock is a loop inside withLock",
            "MultiLock.withLocksMany",
            "a streaming body: blocking code that produces many elements under the set is a loop inside withLocks");

    private static final Set<String> OBJECT_METHODS = Arrays.stream(Object.class.getMethods())
            .map(Method::getName).collect(Collectors.toSet());

    @Test
    void everyCoreMethodHasABlockingCounterpartOrAStatedReason() {
        List<String> missing = new ArrayList<>();
        FACADES.forEach((core, facade) -> {
            for (Method m : coreMethods(core)) {
                String key = core.getSimpleName() + "." + m.getName();
                if (EXCEPTIONS.containsKey(key)) {
                    continue;
                }
                String name = RENAMED.getOrDefault(m.getName(), m.getName());
                int count = m.getParameterCount();
                boolean stream = Flux.class.isAssignableFrom(m.getReturnType());
                List<Method> candidates = Arrays.stream(facade.getMethods())
                        .filter(f -> !Modifier.isStatic(f.getModifiers()) && f.getName().equals(name))
                        .filter(f -> f.getParameterCount() == count || (stream && f.getParameterCount() == count + 1))
                        .toList();
                if (candidates.isEmpty()) {
                    missing.add(facade.getSimpleName() + " has no " + name + " with " + count + (stream ? " or " + (count + 1) : "")
                            + " parameters for " + describe(core, m));
                    continue;
                }
                Class<?> mapped = FACADES.get(m.getReturnType());
                if (mapped != null && candidates.stream().noneMatch(f -> f.getReturnType() == mapped)) {
                    missing.add(facade.getSimpleName() + "." + name + " must return " + mapped.getSimpleName()
                            + " for " + describe(core, m));
                }
            }
        });
        assertThat(missing).as("core methods without a blocking counterpart (add one, or an EXCEPTIONS entry with the reason)")
                .isEmpty();
    }

    @Test
    void everyConceptTheSessionHandsOutHasAFacadeType() {
        List<String> unmapped = coreMethods(LockStore.class).stream()
                .map(Method::getReturnType)
                .filter(t -> t.getPackageName().startsWith("io.reactivelocks") && !t.isEnum() && !t.isRecord())
                .filter(t -> !FACADES.containsKey(t))
                .map(Class::getName).distinct().toList();
        assertThat(unmapped).as("concepts of LockStore without a blocking facade type in FACADES").isEmpty();
    }

    @Test
    void everyExceptionNamesAnExistingCoreMethodThatTheFacadeLacks() {
        EXCEPTIONS.forEach((key, reason) -> {
            String[] parts = key.split("\\.", 2);
            Class<?> core = FACADES.keySet().stream().filter(c -> c.getSimpleName().equals(parts[0])).findFirst().orElseThrow();
            assertThat(coreMethods(core)).as(key + " is not a core method any more").anyMatch(m -> m.getName().equals(parts[1]));
            assertThat(FACADES.get(core).getMethods()).as(key + " has a facade counterpart now: drop the exception")
                    .noneMatch(f -> f.getName().equals(parts[1]));
            assertThat(reason).isNotBlank();
        });
    }

    private static List<Method> coreMethods(Class<?> core) {
        return Arrays.stream(core.getMethods())
                .filter(m -> !Modifier.isStatic(m.getModifiers()) && !m.isSynthetic() && !m.isBridge())
                .filter(m -> m.getDeclaringClass() != Object.class && !OBJECT_METHODS.contains(m.getName()))
                .toList();
    }

    private static String describe(Class<?> core, Method m) {
        return core.getSimpleName() + "." + m.getName() + Arrays.stream(m.getParameterTypes())
                .map(Class::getSimpleName).collect(Collectors.joining(", ", "(", ")"));
    }
}

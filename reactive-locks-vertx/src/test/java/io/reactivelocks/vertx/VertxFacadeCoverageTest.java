package io.reactivelocks.vertx;

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
import io.vertx.core.Future;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The Vert.x facade against core, by reflection: every public method of every core concept interface
 * (declared and default, inherited included, {@link Object}'s and static factories excluded) must have a
 * counterpart in the facade type mapped to it, or an entry in {@link #EXCEPTIONS} saying why not. A
 * method added to a core interface without either fails this test.
 *
 * <p>Rules of the mapping:
 * <ul>
 *   <li><b>Types</b>: {@link #CONCEPTS} maps each core concept to its facade type ({@code LockStore} →
 *       {@link VertxLockStore}, {@code LockClient} → {@link VertxLocks}, ...). Every core interface a
 *       {@code LockStore} method hands out must be mapped there (a new concept fails the test), and the
 *       facade method handing it out (on the session or elsewhere, e.g. {@code MultiLock.client()}) must
 *       return the mapped facade type.</li>
 *   <li><b>Values</b>: {@link #VALUES} maps the values core hands out ({@code Lease}, {@code MultiLease},
 *       {@code Leadership}), which the facade hands out as they are. Their plain accessors ({@code token()},
 *       {@code payload()}, ...) are read on the value itself; each of their reactive verbs (returning
 *       {@code Mono}/{@code Flux}) must be a method of the facade type that takes the value as its first
 *       argument: {@code lease.release()} → {@code locks.release(lease)}.</li>
 *   <li><b>Names</b>: a facade method has the core method's name ({@link #RENAMES} lists the exceptions:
 *       none today).</li>
 *   <li><b>Overloads</b>: for each core overload with {@code n} parameters the facade has a method of that
 *       name with {@code n} parameters ({@code n + 1} for a value's verb); overloads the facade folds into
 *       one (default arguments) would be listed in {@link #EXCEPTIONS} as {@code Type#name/n}.</li>
 *   <li><b>Shapes</b>: a core {@code Mono} is a Vert.x {@link Future}; a core {@code Flux} is a
 *       {@link LockStream}; a plain result stays plain.</li>
 * </ul>
 */
class VertxFacadeCoverageTest {

    /** Core concept → its facade type. */
    static final Map<Class<?>, Class<?>> CONCEPTS = Map.ofEntries(
            Map.entry(LockStore.class, VertxLockStore.class),
            Map.entry(LockClient.class, VertxLocks.class),
            Map.entry(Semaphore.class, VertxSemaphore.class),
            Map.entry(ReadWriteLock.class, VertxReadWriteLock.class),
            Map.entry(ReadWriteLock.Access.class, VertxReadWriteLock.Access.class),
            Map.entry(MultiLock.class, VertxMultiLock.class),
            Map.entry(WindowLock.class, VertxWindowLock.class),
            Map.entry(LeaderElection.class, VertxLeaderElection.class),
            Map.entry(FencedValues.class, VertxFencedValues.class),
            Map.entry(TaskQueue.class, VertxTaskQueue.class),
            Map.entry(LockAdmin.class, VertxAdmin.class));

    /** Core value handed out as it is → the facade type whose methods take it for its reactive verbs. */
    static final Map<Class<?>, Class<?>> VALUES = Map.of(
            Lease.class, VertxLocks.class,
            MultiLease.class, VertxMultiLock.class,
            Leadership.class, VertxLeaderElection.class);

    /** {@code CoreType#method} → the facade's name for it, where it differs. */
    static final Map<String, String> RENAMES = Map.of();

    /**
     * {@code CoreType#method} (every overload) or {@code CoreType#method/n} (the overload with n
     * parameters) → why the facade has no counterpart. Every entry must name a core method and
     * must still be needed.
     */
    static final Map<String, String> EXCEPTIONS = Map.of();

    /** A core method, seen from the facade. */
    private record Verb(Class<?> core, Method method, Class<?> facade, boolean value) {

        String key() {
            return core.getSimpleName() + "#" + method.getName();
        }

        String overloadKey() {
            return key() + "/" + method.getParameterCount();
        }

        String facadeName() {
            return RENAMES.getOrDefault(key(), method.getName());
        }

        int facadeParameterCount() {
            return method.getParameterCount() + (value ? 1 : 0);
        }

        @Override
        public String toString() {
            return core.getSimpleName() + "." + method.getName() + Arrays.stream(method.getParameterTypes())
                    .map(Class::getSimpleName).collect(Collectors.joining(", ", "(", ")"));
        }
    }

    @Test
    void everyCoreVerbHasAFacadeCounterpartOrAnException() {
        List<String> missing = new ArrayList<>();
        for (Verb verb : verbs()) {
            if (EXCEPTIONS.containsKey(verb.key()) || EXCEPTIONS.containsKey(verb.overloadKey())) {
                continue;
            }
            List<Method> named = facadeMethods(verb.facade(), verb.facadeName());
            if (named.isEmpty()) {
                missing.add(verb + ": no " + verb.facade().getSimpleName() + "." + verb.facadeName());
            } else if (counterpart(verb).isEmpty()) {
                missing.add(verb + ": no " + verb.facade().getSimpleName() + "." + verb.facadeName() + " with "
                        + verb.facadeParameterCount() + " parameter(s)" + (verb.value() ? " (the value first)" : ""));
            }
        }
        assertThat(missing).as("core verbs without a Vert.x counterpart (add one, or an entry to EXCEPTIONS with the reason)")
                .isEmpty();
    }

    @Test
    void facadeMethodsHaveTheVertxShapeOfTheCoreResult() {
        List<String> wrong = new ArrayList<>();
        for (Verb verb : verbs()) {
            Optional<Method> found = counterpart(verb);
            if (found.isEmpty()) {
                continue;
            }
            Class<?> coreResult = verb.method().getReturnType();
            Class<?> facadeResult = found.get().getReturnType();
            Class<?> expected = coreResult == Mono.class ? Future.class
                    : coreResult == Flux.class ? LockStream.class
                    : CONCEPTS.getOrDefault(coreResult, coreResult);
            if (!expected.isAssignableFrom(facadeResult)) {
                wrong.add(verb + " returns " + coreResult.getSimpleName() + ": the facade's returns "
                        + facadeResult.getSimpleName() + ", expected " + expected.getSimpleName());
            }
        }
        assertThat(wrong).as("facade results (Mono → Future, Flux → LockStream, concept → its facade)").isEmpty();
    }

    @Test
    void everyConceptTheSessionHandsOutIsMapped() {
        List<String> unmapped = new ArrayList<>();
        for (Method m : publicMethods(LockStore.class)) {
            Class<?> result = m.getReturnType();
            if (result.isInterface() && result.getPackageName().startsWith("io.reactivelocks") && !CONCEPTS.containsKey(result)) {
                unmapped.add("LockStore." + m.getName() + " hands out " + result.getName() + ", which has no facade type in CONCEPTS");
            }
        }
        for (Class<?> concept : CONCEPTS.keySet()) {
            for (Method m : publicMethods(concept)) {
                Class<?> result = m.getReturnType();
                if (result.isInterface() && result.getPackageName().startsWith("io.reactivelocks")
                        && !CONCEPTS.containsKey(result) && !VALUES.containsKey(result)
                        && !result.getName().endsWith("Metrics")) {
                    unmapped.add(concept.getSimpleName() + "." + m.getName() + " hands out " + result.getName()
                            + ", which is neither a concept nor a value of this test");
                }
            }
        }
        assertThat(unmapped).isEmpty();
    }

    @Test
    void everyExceptionNamesACoreMethodStillWithoutCounterpart() {
        List<String> stale = new ArrayList<>();
        for (String key : EXCEPTIONS.keySet()) {
            List<Verb> matching = verbs().stream()
                    .filter(v -> key.equals(v.key()) || key.equals(v.overloadKey()))
                    .toList();
            if (matching.isEmpty()) {
                stale.add(key + ": no such core method");
            } else if (matching.stream().allMatch(v -> counterpart(v).isPresent())) {
                stale.add(key + ": the facade has it now; remove the exception");
            }
        }
        for (String key : RENAMES.keySet()) {
            if (verbs().stream().noneMatch(v -> key.equals(v.key()))) {
                stale.add(key + " (rename): no such core method");
            }
        }
        assertThat(stale).as("stale EXCEPTIONS or RENAMES entries").isEmpty();
    }

    @Test
    void theTestSeesEveryVerbOfTheCoreInterfaces() {
        // a sanity floor, so that a mapping mistake cannot make the comparison vacuous
        List<Verb> verbs = verbs();
        assertThat(verbs).hasSizeGreaterThan(90);
        assertThat(verbs).extracting(Verb::key).contains("LockStore#taskQueue", "TaskQueue#process",
                "ReadWriteLock#withWriteLock", "Access#hold", "Lease#updatePayload", "MultiLease#lost", "Leadership#proclaim",
                "LockClient#withLockMany", "FencedValues#delete");
    }

    /** @return every verb of the core types the facade must offer */
    private static List<Verb> verbs() {
        Stream<Verb> concepts = CONCEPTS.entrySet().stream().flatMap(e -> publicMethods(e.getKey()).stream()
                .map(m -> new Verb(e.getKey(), m, e.getValue(), false)));
        Stream<Verb> values = VALUES.entrySet().stream().flatMap(e -> publicMethods(e.getKey()).stream()
                .filter(m -> m.getReturnType() == Mono.class || m.getReturnType() == Flux.class)
                .map(m -> new Verb(e.getKey(), m, e.getValue(), true)));
        return Stream.concat(concepts, values)
                .sorted(Comparator.comparing(Verb::toString))
                .toList();
    }

    /** @return the public instance methods of a core type: declared, default and inherited, not {@link Object}'s */
    private static List<Method> publicMethods(Class<?> type) {
        return Arrays.stream(type.getMethods())
                .filter(m -> !Modifier.isStatic(m.getModifiers()) && !m.isSynthetic() && !m.isBridge())
                .filter(m -> !isObjectMethod(m))
                .toList();
    }

    private static boolean isObjectMethod(Method m) {
        try {
            Object.class.getMethod(m.getName(), m.getParameterTypes());
            return true;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    private static List<Method> facadeMethods(Class<?> facade, String name) {
        return Arrays.stream(facade.getMethods())
                .filter(m -> !Modifier.isStatic(m.getModifiers()) && m.getName().equals(name))
                .toList();
    }

    /** @return the facade method of the verb: its name and parameter count, the value first for a value's verb */
    private static Optional<Method> counterpart(Verb verb) {
        return facadeMethods(verb.facade(), verb.facadeName()).stream()
                .filter(m -> m.getParameterCount() == verb.facadeParameterCount())
                .filter(m -> !verb.value() || m.getParameterTypes()[0].isAssignableFrom(verb.core()))
                .findFirst();
    }
}

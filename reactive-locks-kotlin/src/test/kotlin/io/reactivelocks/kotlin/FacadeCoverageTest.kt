package io.reactivelocks.kotlin

import io.reactivelocks.Concept
import io.reactivelocks.Lease
import io.reactivelocks.LockClient
import io.reactivelocks.LockStore
import io.reactivelocks.admin.LockAdmin
import io.reactivelocks.election.LeaderElection
import io.reactivelocks.election.Leadership
import io.reactivelocks.fencing.FencedValues
import io.reactivelocks.multi.MultiLease
import io.reactivelocks.multi.MultiLock
import io.reactivelocks.rwlock.ReadWriteLock
import io.reactivelocks.semaphore.Semaphore
import io.reactivelocks.task.TaskQueue
import io.reactivelocks.window.WindowLock
import java.lang.reflect.GenericArrayType
import java.lang.reflect.Method
import java.lang.reflect.Modifier
import java.lang.reflect.ParameterizedType
import java.lang.reflect.Type
import java.lang.reflect.WildcardType
import kotlin.coroutines.Continuation
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import org.reactivestreams.Publisher
import reactor.core.publisher.Mono

/**
 * The facade is derived from core, not remembered: this test compares the two by reflection and
 * fails when a core concept, or a public method of a core interface, has no coroutine counterpart.
 *
 * **What is compared.** For each core type of [FACADES], every public instance method (declared,
 * inherited and default; not `Object`'s, not static — a static factory's counterpart is the
 * `coroutines()` extension on what it creates; not synthetic) needs a counterpart in the facade
 * class, unless [EXCEPTIONS] names it with a reason.
 *
 * **Name mapping.**
 * 1. Same name: `acquire` → `suspend fun acquire` (a `Mono` becomes a `suspend` function, a `Flux` a
 *    `Flow`, a `Flux` answered as a whole — `TaskQueue.tryCapture` — a `suspend` function returning a `List`).
 * 2. A core accessor without parameters may be a Kotlin property: `options()` → `val options`
 *    (its getter `getOptions`).
 * 3. The core types of [AS_IS] are handed out as they are (a `Lease` stays a `Lease`); only their
 *    methods returning a `Mono`/`Flux` need a counterpart: a suspending extension named
 *    `<name>AndAwait` or `await<Name>` in `Leases.kt` (`release` → `releaseAndAwait`,
 *    `lost` → `awaitLost`) — an extension cannot take the member's own name, the member would shadow it.
 *
 * **Overloads** collapse where the facade uses default arguments, so names are compared, and then
 * parameter counts: for every core overload with n parameters the facade has a function of that name
 * with at least n (not counting a `suspend` function's `Continuation` or an extension's receiver).
 *
 * **Concepts.** Every [Concept] has an entry in [CONCEPT_ENTRIES] on [CoroutineLockStore]; a core
 * method returning a type of [FACADES] (`LockStore.locks()`, `MultiLock.client()`,
 * `ReadWriteLock.read()`) has a counterpart returning that type's facade; and every core type reachable
 * from the mapped ones through results (`Mono<Lease>`, `Flux<Leadership>`, …) that has methods
 * returning a `Mono`/`Flux` is in [FACADES] or [AS_IS] — a new concept or handle type cannot slip by.
 */
class FacadeCoverageTest {

    companion object {
        /** Core type → the facade type standing for it. */
        val FACADES: Map<Class<*>, Class<*>> = linkedMapOf(
            LockStore::class.java to CoroutineLockStore::class.java,
            LockClient::class.java to CoroutineLockClient::class.java,
            Semaphore::class.java to CoroutineSemaphore::class.java,
            ReadWriteLock::class.java to CoroutineReadWriteLock::class.java,
            ReadWriteLock.Access::class.java to CoroutineReadWriteLock.Access::class.java,
            MultiLock::class.java to CoroutineMultiLock::class.java,
            WindowLock::class.java to CoroutineWindowLock::class.java,
            LeaderElection::class.java to CoroutineLeaderElection::class.java,
            FencedValues::class.java to CoroutineFencedValues::class.java,
            TaskQueue::class.java to CoroutineTaskQueue::class.java,
            LockAdmin::class.java to CoroutineLockAdmin::class.java,
        )

        /** Core types handed out as they are; their reactive methods have suspending extensions in this file class. */
        val AS_IS: Map<Class<*>, Class<*>> = linkedMapOf(
            Lease::class.java to Class.forName("io.reactivelocks.kotlin.LeasesKt"),
            MultiLease::class.java to Class.forName("io.reactivelocks.kotlin.LeasesKt"),
            Leadership::class.java to Class.forName("io.reactivelocks.kotlin.LeasesKt"),
        )

        /** Each concept's entry on [CoroutineLockStore]. */
        val CONCEPT_ENTRIES: Map<Concept, String> = mapOf(
            Concept.LOCK to "locks",
            Concept.FAIR_LOCK to "fairLocks",
            Concept.SEMAPHORE to "semaphores",
            Concept.READ_WRITE_LOCK to "readWriteLocks",
            Concept.MULTI_LOCK to "multiLocks",
            Concept.WINDOW_LOCK to "windowLocks",
            Concept.LEADER_ELECTION to "elections",
            Concept.FENCED_VALUES to "fencedValues",
            Concept.TASK_QUEUE to "taskQueue",
        )

        /**
         * Core methods (`Type#method`) the facade leaves out on purpose, with the reason. Empty today:
         * every verb of core has a coroutine form. An entry must name a core method that exists and
         * that the facade really lacks (a stale entry fails the test).
         */
        val EXCEPTIONS: Map<String, String> = mapOf()

        private val OBJECT_METHODS: Set<String> = Any::class.java.methods.map { signature(it) }.toSet()

        private fun signature(m: Method) = m.name + m.parameterTypes.joinToString(",", "(", ")") { it.name }

        private fun key(type: Class<*>, m: Method) = type.simpleName.let { s ->
            (type.enclosingClass?.simpleName?.let { "$it.$s" } ?: s) + "#" + m.name
        }

        /** The public instance methods of a core type that need a counterpart. */
        fun coreMethods(type: Class<*>): List<Method> = type.methods.filter { m ->
            !Modifier.isStatic(m.modifiers) && !m.isSynthetic && !m.isBridge && m.declaringClass != Any::class.java &&
                signature(m) !in OBJECT_METHODS
        }

        private fun isReactive(m: Method) = Publisher::class.java.isAssignableFrom(m.returnType)

        /** Parameters a caller passes: not a `suspend` function's continuation. */
        private fun arity(m: Method): Int =
            m.parameterCount - (if (m.parameterTypes.lastOrNull() == Continuation::class.java) 1 else 0)

        private fun capitalized(name: String) = name.replaceFirstChar { it.uppercaseChar() }

        /** @return the problems of [facade] as the counterpart of [core]: one line per missing method */
        fun missingMembers(core: Class<*>, facade: Class<*>, exceptions: Map<String, String> = EXCEPTIONS): List<String> {
            val members = facade.methods.filter { !Modifier.isStatic(it.modifiers) && !it.isSynthetic }
            val problems = mutableListOf<String>()
            for (m in coreMethods(core)) {
                if (key(core, m) in exceptions) continue
                val names = mutableSetOf(m.name)
                if (m.parameterCount == 0) names += "get" + capitalized(m.name)
                val candidates = members.filter { it.name in names }
                if (candidates.none { arity(it) >= m.parameterCount }) {
                    problems += "${key(core, m)}/${m.parameterCount}: no ${facade.simpleName}.${m.name} " +
                        "taking ${m.parameterCount} parameters (found ${candidates.map { "${it.name}/${arity(it)}" }})"
                    continue
                }
                val mapped = FACADES[m.returnType]
                if (mapped != null && candidates.none { it.returnType == mapped }) {
                    problems += "${key(core, m)}: returns ${m.returnType.simpleName}, the facade's ${m.name} does not return ${mapped.simpleName}"
                }
            }
            return problems
        }

        /** @return the problems of [extensions] as the suspending forms of the reactive methods of [core] */
        fun missingExtensions(core: Class<*>, extensions: Class<*>, exceptions: Map<String, String> = EXCEPTIONS): List<String> {
            val functions = extensions.methods.filter {
                Modifier.isStatic(it.modifiers) && it.parameterCount > 0 && it.parameterTypes[0].isAssignableFrom(core)
            }
            return coreMethods(core).filter(::isReactive).filter { key(core, it) !in exceptions }.mapNotNull { m ->
                val names = setOf(m.name + "AndAwait", "await" + capitalized(m.name))
                if (functions.any { it.name in names && arity(it) - 1 >= m.parameterCount }) null
                else "${key(core, m)}/${m.parameterCount}: no suspending extension ${names.joinToString(" or ")} on ${core.simpleName}"
            }
        }

        /** Core types (of io.reactivelocks) in [type] and its type arguments. */
        private fun coreTypesIn(type: Type, into: MutableSet<Class<*>>) {
            when (type) {
                is Class<*> -> if (type.name.startsWith("io.reactivelocks.") && !type.isEnum && !type.isPrimitive) into += type
                is ParameterizedType -> { coreTypesIn(type.rawType, into); type.actualTypeArguments.forEach { coreTypesIn(it, into) } }
                is WildcardType -> (type.upperBounds + type.lowerBounds).forEach { coreTypesIn(it, into) }
                is GenericArrayType -> coreTypesIn(type.genericComponentType, into)
            }
        }

        /** Every core type reachable through the results of the mapped types' methods. */
        fun reachableCoreTypes(): Set<Class<*>> {
            val seen = linkedSetOf<Class<*>>()
            val todo = ArrayDeque(FACADES.keys + AS_IS.keys)
            while (todo.isNotEmpty()) {
                val type = todo.removeFirst()
                if (!seen.add(type)) continue
                val found = mutableSetOf<Class<*>>()
                coreMethods(type).forEach { coreTypesIn(it.genericReturnType, found) }
                todo += found - seen
            }
            return seen
        }
    }

    @Test
    fun everyMethodOfEveryCoreConceptHasACoroutineCounterpart() {
        val problems = FACADES.flatMap { (core, facade) -> missingMembers(core, facade) } +
            AS_IS.flatMap { (core, extensions) -> missingExtensions(core, extensions) }
        assertThat(problems).`as`("core methods without a counterpart in reactive-locks-kotlin " +
            "(add one, or an entry with its reason to FacadeCoverageTest.EXCEPTIONS)").isEmpty()
    }

    @Test
    fun everyConceptOfTheStoreHasAnEntryOnTheCoroutineSession() {
        assertThat(CONCEPT_ENTRIES.keys).`as`("concepts without an entry in CONCEPT_ENTRIES").containsExactlyInAnyOrder(*Concept.values())
        val session = CoroutineLockStore::class.java.methods
        CONCEPT_ENTRIES.forEach { (concept, entry) ->
            assertThat(session.filter { it.name == entry }.map { it.returnType })
                .`as`("$concept: CoroutineLockStore.$entry returns a facade type").isNotEmpty.allMatch { it in FACADES.values }
        }
    }

    @Test
    fun everyCoreTypeWithReactiveMethodsReachableFromTheConceptsIsMapped() {
        val unmapped = reachableCoreTypes().filter { type -> coreMethods(type).any(::isReactive) } -
            FACADES.keys - AS_IS.keys
        assertThat(unmapped).`as`("core types with Mono/Flux methods the facade neither wraps nor hands out with extensions").isEmpty()
        assertThat(reachableCoreTypes()).`as`("the walk finds the handles").contains(Lease::class.java, MultiLease::class.java, Leadership::class.java)
    }

    @Test
    fun everyExceptionNamesACoreMethodTheFacadeLacks() {
        val coreKeys = (FACADES.keys + AS_IS.keys).flatMap { t -> coreMethods(t).map { key(t, it) } }.toSet()
        assertThat(EXCEPTIONS.keys - coreKeys).`as`("exceptions naming no core method").isEmpty()
        EXCEPTIONS.keys.forEach { k ->
            val without = EXCEPTIONS - k
            val stillMissing = FACADES.flatMap { (c, f) -> missingMembers(c, f, without) } +
                AS_IS.flatMap { (c, e) -> missingExtensions(c, e, without) }
            assertThat(stillMissing).`as`("exception $k: the facade has a counterpart, remove the entry").anyMatch { it.startsWith("$k/") }
        }
        assertThat(EXCEPTIONS.values).allMatch { it.isNotBlank() }
    }

    /** A core interface that grew a verb the facade does not have yet. */
    interface GrownFencedValues : FencedValues {
        fun compareAndDelete(key: String, token: Long, expected: String): Mono<Boolean>
    }

    /** A handle that grew a reactive verb. */
    interface GrownLease : Lease {
        fun extend(by: java.time.Duration): Mono<Void>
    }

    @Test
    fun theCheckFailsForAVerbAddedToCoreWithoutACounterpart() {
        assertThat(missingMembers(GrownFencedValues::class.java, CoroutineFencedValues::class.java))
            .singleElement().asString().startsWith("FacadeCoverageTest.GrownFencedValues#compareAndDelete/3: no CoroutineFencedValues.compareAndDelete")
        assertThat(missingMembers(GrownFencedValues::class.java, CoroutineFencedValues::class.java,
            mapOf("FacadeCoverageTest.GrownFencedValues#compareAndDelete" to "a reason"))).isEmpty()
        assertThat(missingExtensions(GrownLease::class.java, AS_IS.getValue(Lease::class.java)))
            .singleElement().asString().startsWith("FacadeCoverageTest.GrownLease#extend/1: no suspending extension extendAndAwait or awaitExtend")
    }
}

/**
 * Network fault injection for tests: {@link io.reactivelocks.test.fault.FaultProxy} is a TCP proxy
 * on a loopback port that can add latency, blackhole, cut or refuse connections at runtime. It runs
 * on its own daemon threads with blocking sockets, never on Reactor threads.
 */
@NullMarked
package io.reactivelocks.test.fault;

import org.jspecify.annotations.NullMarked;

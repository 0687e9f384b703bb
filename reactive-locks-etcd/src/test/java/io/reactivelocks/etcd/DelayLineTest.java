package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The shared timer of the held-key delay, in virtual time: each entry ends at its own time, a left one never. */
class DelayLineTest {

    @Test
    void eachEntryEndsAfterTheDelayFromItsOwnJoiningAndALeftOneNever() {
        VirtualTimeScheduler time = VirtualTimeScheduler.create();
        AtomicReference<Duration> length = new AtomicReference<>(Duration.ofMillis(250));
        DelayLine line = new DelayLine(time, length::get);
        List<String> ended = new ArrayList<>();

        line.after().subscribe(null, null, () -> ended.add("a"));
        time.advanceTimeBy(Duration.ofMillis(100));
        line.after().subscribe(null, null, () -> ended.add("b"));
        Disposable c = line.after().subscribe(null, null, () -> ended.add("c"));
        time.advanceTimeBy(Duration.ofMillis(149));
        assertThat(ended).isEmpty();
        time.advanceTimeBy(Duration.ofMillis(1).plusNanos(DelayLine.SLACK));
        assertThat(ended).as("a at 250 ms (plus the slack)").containsExactly("a");
        c.dispose(); // leaves the line: never ends
        time.advanceTimeBy(Duration.ofMillis(99));
        assertThat(ended).containsExactly("a");
        time.advanceTimeBy(Duration.ofMillis(1));
        assertThat(ended).containsExactly("a", "b");
        time.advanceTimeBy(Duration.ofSeconds(5));
        assertThat(ended).as("the left entry").containsExactly("a", "b");

        // the line empty: the next entry arms the timer again
        line.after().subscribe(null, null, () -> ended.add("d"));
        time.advanceTimeBy(Duration.ofMillis(249));
        assertThat(ended).containsExactly("a", "b");
        time.advanceTimeBy(Duration.ofMillis(1).plusNanos(DelayLine.SLACK));
        assertThat(ended).containsExactly("a", "b", "d");

        // a shorter length (tests): an entry due before the armed time arms the timer earlier
        length.set(Duration.ofHours(1));
        line.after().subscribe(null, null, () -> ended.add("e"));
        length.set(Duration.ofMillis(100));
        line.after().subscribe(null, null, () -> ended.add("f"));
        time.advanceTimeBy(Duration.ofMillis(100).plusNanos(DelayLine.SLACK));
        assertThat(ended).containsExactly("a", "b", "d", "f");
        time.advanceTimeBy(Duration.ofHours(1));
        assertThat(ended).containsExactly("a", "b", "d", "f", "e");

        // closed: the timer is gone, nothing ends any more
        line.after().subscribe(null, null, () -> ended.add("g"));
        line.close();
        time.advanceTimeBy(Duration.ofHours(2));
        assertThat(ended).containsExactly("a", "b", "d", "f", "e");
        time.dispose();
    }
}

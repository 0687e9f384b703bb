package io.reactivelocks.test.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Supplier;

/** The resolution chain shared by the fixtures: walk the steps in order, or force one. */
final class Resolution {

    /**
     * One step of the chain.
     *
     * @param mode    the mode this step implements
     * @param problem says why it cannot be used here (empty when it can); only asked when the step is reached
     * @param starter starts the server; only called when available
     */
    record Step<T>(FixtureMode mode, Supplier<Optional<String>> problem, Supplier<T> starter) {
        static <T> Step<T> of(FixtureMode mode, Supplier<Optional<String>> problem, Supplier<T> starter) {
            return new Step<>(mode, problem, starter);
        }

        static <T> Step<T> unavailable(FixtureMode mode, String why) {
            return new Step<>(mode, () -> Optional.of(why), null);
        }
    }

    private Resolution() {
    }

    /**
     * Starts the server of the first available step (AUTO) or of the forced step. A step that is
     * available but fails to start is not skipped: its error is the answer.
     */
    static <T> T resolve(String kind, FixtureMode mode, String installHint, List<Step<T>> steps) {
        List<String> reasons = new ArrayList<>();
        for (Step<T> step : steps) {
            if (mode != FixtureMode.AUTO && step.mode() != mode) {
                continue;
            }
            Optional<String> problem = step.problem().get();
            if (problem.isEmpty()) {
                return step.starter().get();
            }
            reasons.add(step.mode().name().toLowerCase(Locale.ROOT) + ": " + problem.get());
        }
        String what = mode == FixtureMode.AUTO
                ? "No " + kind + " server is available for tests"
                : "The " + kind + " fixture is forced to mode '" + mode.name().toLowerCase(Locale.ROOT)
                        + "' (" + FixtureMode.PROPERTY + ") but that is not available";
        throw new ServerUnavailableException(what + ". " + installHint
                + (reasons.isEmpty() ? "" : " Details: " + String.join("; ", reasons) + "."));
    }
}

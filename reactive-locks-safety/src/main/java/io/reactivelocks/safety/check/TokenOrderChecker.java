package io.reactivelocks.safety.check;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Token monotonicity per name: a grant whose acquire was invoked after another grant of the name had
 * completed carries a strictly greater token (the later grant happened later on the store), and no two
 * grants of a name share a token. For a read-write name two readers' grants are not compared (readers
 * may be granted together); every other pair is.
 */
public final class TokenOrderChecker implements HistoryChecker {

    /** Makes the checker. */
    public TokenOrderChecker() {
    }

    @Override
    public String name() {
        return "token-order";
    }

    @Override
    public CheckVerdict check(History history) {
        Map<String, List<History.Hold>> byName = new HashMap<>();
        for (History.Hold h : history.holds()) {
            byName.computeIfAbsent(h.name(), n -> new ArrayList<>()).add(h);
        }
        long judged = 0;
        for (List<History.Hold> grants : byName.values()) {
            judged += grants.size();
            // the same token granted twice
            Map<Long, History.Hold> seen = new HashMap<>();
            for (History.Hold h : grants) {
                History.Hold other = seen.putIfAbsent(h.token(), h);
                if (other != null && !(other.mode().equals("r") && h.mode().equals("r"))) {
                    return CheckVerdict.invalid(name(), "token " + h.token() + " of " + h.name() + " granted twice",
                            List.of(other.grant(), h.grant()));
                }
            }
            // a grant after another completed carries a greater token: sweep the grants by their completion
            for (String kind : List.of("all", "writers")) {
                List<History.Hold> byGrant = new ArrayList<>(grants);
                List<History.Hold> byAsk = new ArrayList<>(grants);
                byAsk.sort(Comparator.comparingLong(History.Hold::asked));
                int i = 0;
                History.Hold highest = null;
                for (History.Hold later : byAsk) {
                    while (i < byGrant.size() && byGrant.get(i).grant().t() < later.asked()) {
                        History.Hold h = byGrant.get(i++);
                        // "all": every earlier grant against a later writer; "writers": earlier writers against every later grant
                        if ((kind.equals("all") || !h.mode().equals("r"))
                                && (highest == null || h.token() > highest.token())) {
                            highest = h;
                        }
                    }
                    boolean compare = kind.equals("writers") || !later.mode().equals("r");
                    if (compare && highest != null && highest.token() >= later.token()) {
                        return CheckVerdict.invalid(name(), "token " + later.token() + " of " + later.name() + " (" + later.client()
                                + ") was granted to an acquire invoked after token " + highest.token() + " had been granted to "
                                + highest.client(), List.of(highest.grant(), later.grant()));
                    }
                }
            }
        }
        return CheckVerdict.valid(name(), judged + " grants, tokens strictly increasing in real-time order");
    }
}

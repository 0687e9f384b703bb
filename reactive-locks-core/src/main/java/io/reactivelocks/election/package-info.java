/**
 * Leader election on any {@link io.reactivelocks.LockClient}: {@link io.reactivelocks.election.LeaderElection}
 * (campaign, current leader, observe, proclaim), {@link io.reactivelocks.election.Leader} (who
 * leads, as anyone sees it) and {@link io.reactivelocks.election.Leadership} (this process leads).
 * An election is a lock whose payload is the leader's value: every store that runs locks runs
 * elections, with the lock's fencing tokens and loss detection.
 */
@NullMarked
package io.reactivelocks.election;

import org.jspecify.annotations.NullMarked;

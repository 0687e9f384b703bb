package io.reactivelocks;

/**
 * A {@link LockStore} was asked for a concept it does not offer (see {@link LockStore#concepts()}).
 * Thrown at once by the method that hands the concept out: a configuration mistake, not an
 * outage.
 */
public final class ConceptNotOfferedException extends UnsupportedOperationException {

    private static final long serialVersionUID = 1L;

    private final String store;
    private final Concept concept;

    /**
     * @param store   the store's name, as {@link LockStore#name()}
     * @param concept the concept asked for
     */
    public ConceptNotOfferedException(String store, Concept concept) {
        super("the " + store + " store offers no " + concept
                + " (it offers what LockStore.concepts() lists; pick a store that offers it)");
        this.store = store;
        this.concept = concept;
    }

    /** @return the store's name */
    public String store() {
        return store;
    }

    /** @return the concept asked for */
    public Concept concept() {
        return concept;
    }
}

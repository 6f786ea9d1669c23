/**
 * What one audit record may take in a transaction, at most: a page of its
 * own. Callers state what a transaction may add in these (StoreRoom.check).
 */
export const RECORD_BYTES = 4096;

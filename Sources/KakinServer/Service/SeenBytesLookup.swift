import KakinLedger
import Synchronization

/// When an upload's signed bytes are looked up in the ledger before they are verified.
///
/// Bytes the ledger holds already need no verification and no write: a lookup by their digest
/// answers them (a duplicate upload, such as an app posting its transactions again at launch). For
/// bytes never seen, the lookup is a miss that the upload pays on top of its write. Where a miss is
/// nearly free (SQLite rules most out in memory), looking up always pays. Where each lookup is a
/// database statement (PostgreSQL), misses cost a statement and a round trip each, and hold
/// uploads away from the writer's groups; there the lookup runs only while duplicates are common.
/// Either way the answer is the same: an upload that is not looked up is verified and goes to the
/// writer, which finds bytes it holds already and changes nothing.
public enum SeenBytesLookup: Sendable, Hashable {
    /// Before every upload.
    case always
    /// While at least one in ten of the recent uploads of this process (about the last 256 to 512)
    /// were bytes the ledger held already, and until enough uploads were counted to tell.
    case whenDuplicatesAreCommon
}

/// How many of the recent uploads were bytes the ledger held already: a count over about the last
/// ``window`` to ``window`` × 2 uploads, halved as it fills.
final class UploadMix: Sendable {
    /// Uploads counted before the share decides anything.
    static let window = 256
    /// The lookup runs while at least one upload in this many was a duplicate.
    static let lookupShare = 10

    private struct Counts {
        var duplicates = 0
        var total = 0
    }

    private let counts = Mutex(Counts())

    /// Counts an upload: `duplicate` when the ledger held its bytes already.
    func count(duplicate: Bool) {
        counts.withLock { counts in
            counts.total += 1
            if duplicate { counts.duplicates += 1 }
            if counts.total >= 2 * Self.window {
                counts.total /= 2
                counts.duplicates /= 2
            }
        }
    }

    /// Whether duplicates are common enough for the lookup to pay (or too few uploads were counted
    /// to tell).
    var duplicatesAreCommon: Bool {
        counts.withLock { counts in
            counts.total < Self.window || counts.duplicates * Self.lookupShare >= counts.total
        }
    }
}

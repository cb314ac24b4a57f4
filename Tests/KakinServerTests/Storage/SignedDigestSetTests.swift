import Foundation
import Testing

@testable import KakinServer
@testable import KakinLedger

/// The in-memory digests of a SQLite ledger answer "certainly not stored" only for bytes the
/// ledger does not hold.
struct SignedDigestSetTests {
    func digest(_ text: String) -> Data { SignedDigest(text).bytes }

    @Test func answersMaybeUntilLoadedThenExactly() {
        let set = SignedDigestSet()
        #expect(set.mayContain(digest("a")))
        set.insert(digest("a"))  // before loading: ignored, the answer stays "maybe"
        #expect(!set.isLoaded)
        set.load(count: 2) { add in
            add(digest("a"))
            add(digest("b"))
        }
        #expect(set.isLoaded)
        #expect(set.mayContain(digest("a")))
        #expect(set.mayContain(digest("b")))
        #expect(!set.mayContain(digest("c")))
        set.insert(digest("c"))
        #expect(set.mayContain(digest("c")))
        #expect(set.mayContain(Data([1, 2])), "too short to be a digest: maybe")
    }

    @Test func givesUpPastItsCapacity() {
        let small = SignedDigestSet(capacity: 2)
        small.load(count: 3) { _ in Issue.record("a set over capacity reads nothing") }
        #expect(!small.isLoaded)
        #expect(small.mayContain(digest("x")))

        let filling = SignedDigestSet(capacity: 2)
        filling.load(count: 1) { add in add(digest("a")) }
        filling.insert(digest("b"))
        #expect(filling.isLoaded)
        filling.insert(digest("c"))
        #expect(!filling.isLoaded, "a third digest is past the capacity")
        #expect(filling.mayContain(digest("z")))
    }

    /// A reopened ledger loads what it stored, page by page, and new rows join at once.
    @Test func aReopenedLedgerKnowsItsDigests() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kakin-digests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ledger.sqlite").path

        try await withMigratedStore(SQLLedgerStore.sqlite(path: path)) { store in
            for index in 0..<25 {
                _ = try await store.record(Fixture.transaction("t\(index)", user: "u\(index % 3)"), grants: [])
            }
        }
        try await withMigratedStore(SQLLedgerStore.sqlite(path: path)) { store in
            try await store.loadSignedDigests(pageSize: 7)
            let digests = try #require(store.signedDigests)
            #expect(digests.isLoaded)
            for index in 0..<25 {
                #expect(digests.mayContain(digest("jws.t\(index)")))
                let known = try await store.signedTransaction(digest: SignedDigest("jws.t\(index)"))
                #expect(known?.transactionID == "t\(index)")
            }
            #expect(!digests.mayContain(digest("jws.t25")))
            #expect(try await store.signedTransaction(digest: SignedDigest("jws.t25")) == nil)

            _ = try await store.recordAndSummarize(
                Fixture.transaction("t25", user: "u0"), grants: [], recent: 0, withJWS: false)
            #expect(digests.mayContain(digest("jws.t25")))
            #expect(try await store.signedTransaction(digest: SignedDigest("jws.t25"))?.transactionID == "t25")
        }
    }

    @Test func onlySQLiteStoresOpenedHereKeepASet() async throws {
        try await withLedgerStore(.memory) { store in #expect(store.signedDigests != nil) }
        if StoreKind.allCases.contains(.postgres) {
            try await withLedgerStore(.postgres) { store in #expect(store.signedDigests == nil) }
        }
    }
}

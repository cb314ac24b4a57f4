import AppStoreModels
import Foundation
import StoreSandbox
import Testing

/// A fresh directory under the temporary directory, removed by the caller.
private func temporaryDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("kakin-sqlite-state-\(UUID().uuidString)")
}

@Suite struct SQLiteStateStoreTests {
    @Test func theStateSurvivesARestart() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try EngineFixture(store: SQLiteStateStore(directory: directory))
        let tester = try await first.engine.createTester(name: "a@example.com", storefront: "JPN")
        let points = try #require(
            try await first.engine.purchase(.init(testerID: tester.id, productID: "points", quantity: 3)).transaction)
        try await first.engine.finish(points.id, testerID: tester.id)
        let removeAd = try #require(
            try await first.engine.purchase(.init(testerID: tester.id, productID: "removeAd")).transaction)
        try await first.engine.refund(removeAd.id)
        _ = try await first.engine.purchase(.init(testerID: tester.id, productID: "monthly"))
        first.days(40)
        try await first.engine.processRenewals()
        let before = await first.engine.snapshot

        let second = try EngineFixture(store: SQLiteStateStore(directory: directory))
        let after = await second.engine.snapshot
        #expect(after == before)
        #expect(after.nextTransactionNumber == before.nextTransactionNumber)
        #expect(await second.engine.transactions(of: tester.id).map(\.id) == before.transactions.map(\.id))
        #expect(try await second.engine.transaction(points.id).isFinished)
        #expect(try await second.engine.transaction(removeAd.id).revocationDate != nil)
        let next = try #require(
            try await second.engine.purchase(.init(testerID: tester.id, productID: "points")).transaction)
        #expect(!before.transactions.contains { $0.id == next.id }, "numbering goes on after a restart")
    }

    @Test func aPurchaseWritesTheSameFewRowsWhateverTheHistory() async throws {
        var rowsPerPurchase: [Int] = []
        for history in [10, 300] {
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = try SQLiteStateStore(directory: directory)
            let fixture = try EngineFixture(store: store)
            let tester = try await fixture.engine.createTester(name: "many@example.com")
            for _ in 0..<history {
                _ = try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points"))
            }
            let before = store.rowsWritten
            _ = try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points"))
            rowsPerPurchase.append(store.rowsWritten - before)
        }
        // The transaction, its update, its event and the counters.
        #expect(rowsPerPurchase == [4, 4])
    }

    @Test func anIdleSandboxWritesNoRow() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStateStore(directory: directory)
        let fixture = try EngineFixture(store: store)
        let tester = try await fixture.engine.createTester(name: "idle@example.com")
        _ = try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthly"))
        let written = store.rowsWritten
        for _ in 0..<5 {
            fixture.clock.advance(by: 1)
            try await fixture.engine.processRenewals()
        }
        #expect(store.rowsWritten == written)
    }

    @Test func clearingAndResettingRemoveRows() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try EngineFixture(store: SQLiteStateStore(directory: directory))
        let kept = try await first.engine.createTester(name: "kept@example.com")
        let cleared = try await first.engine.createTester(name: "cleared@example.com")
        for tester in [kept, cleared] {
            _ = try await first.engine.purchase(.init(testerID: tester.id, productID: "removeAd"))
            _ = try await first.engine.purchase(.init(testerID: tester.id, productID: "monthly"))
        }
        try await first.engine.clearPurchaseHistory(of: cleared.id)

        let second = try EngineFixture(store: SQLiteStateStore(directory: directory))
        #expect(await second.engine.transactions(of: cleared.id).isEmpty)
        #expect(await second.engine.transactions(of: kept.id).count == 2)
        #expect(try await second.engine.updates(of: cleared.id, after: 0).transactions.isEmpty)
        let number = await second.engine.snapshot.nextTransactionNumber
        try await second.engine.resetAll()

        let third = try EngineFixture(store: SQLiteStateStore(directory: directory))
        let state = await third.engine.snapshot
        #expect(state.testers.isEmpty && state.transactions.isEmpty && state.subscriptions.isEmpty)
        #expect(state.events.isEmpty && state.updates.isEmpty)
        #expect(state.nextTransactionNumber == number, "IDs are never reused")
    }

    @Test func aStateFileIsImportedOnce() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let old = try EngineFixture(store: FileStateStore(directory: directory))
        let tester = try await old.engine.createTester(name: "old@example.com")
        _ = try await old.engine.purchase(.init(testerID: tester.id, productID: "removeAd"))
        _ = try await old.engine.purchase(.init(testerID: tester.id, productID: "monthly"))
        let saved = try #require(try FileStateStore(directory: directory).load())

        let imported = try EngineFixture(store: SQLiteStateStore(directory: directory))
        #expect(await imported.engine.snapshot == saved)
        let json = directory.appendingPathComponent("state.json")
        #expect(!FileManager.default.fileExists(atPath: json.path))
        #expect(FileManager.default.fileExists(atPath: json.path + ".imported"))
        _ = try await imported.engine.purchase(.init(testerID: tester.id, productID: "points"))

        let reopened = try EngineFixture(store: SQLiteStateStore(directory: directory))
        #expect(await reopened.engine.transactions(of: tester.id).count == 3)
    }

    @Test func aMemoryStoreReadsBackWhatWasWritten() async throws {
        let store = MemoryStateStore()
        let first = try EngineFixture(store: store)
        let tester = try await first.engine.createTester(name: "m@example.com")
        _ = try await first.engine.purchase(.init(testerID: tester.id, productID: "monthly"))
        _ = try await first.engine.purchase(.init(testerID: tester.id, productID: "yearly"))
        first.days(400)
        try await first.engine.processRenewals()
        try await first.engine.queueNotifications()
        let second = try EngineFixture(store: store)
        #expect(await second.engine.snapshot == first.engine.snapshot)
    }
}

@Suite struct RecordLogTests {
    private func transaction(_ id: String, tester: String, original: String? = nil) -> SandboxTransaction {
        let date = Date(timeIntervalSince1970: 1_790_000_000)
        return SandboxTransaction(
            id: id, originalID: original ?? id, testerID: tester, productID: "p", productType: .consumable,
            purchaseDate: date, originalPurchaseDate: date, storefront: "USA", storefrontID: "143441", currency: "USD",
            priceMilliunits: 990, appTransactionID: "7")
    }

    @Test func findsByKeyAndGroupAfterChanges() {
        var log = RecordLog<SandboxTransaction>()
        log.append(transaction("1", tester: "a"))
        log.append(transaction("2", tester: "b"))
        log.append(transaction("3", tester: "a", original: "1"))
        #expect(log["2"]?.testerID == "b")
        #expect(log.records(in: .tester("a")).map(\.id) == ["1", "3"])
        #expect(log.records(in: .original("1")).map(\.id) == ["1", "3"])
        log["3"]?.isFinished = true
        #expect(log["3"]?.isFinished == true)
        log.removeAll(in: .tester("a"))
        #expect(log.map(\.id) == ["2"] && log.count == 1 && log["1"] == nil)
        #expect(log.records(in: .original("1")).isEmpty)
        log.append(transaction("4", tester: "a"))
        #expect(log.map(\.id) == ["2", "4"] && log.last?.id == "4")
    }

    @Test func changingAGroupMovesTheRecord() {
        var log = RecordLog<SandboxTransaction>()
        log.append(transaction("1", tester: "a"))
        log.append(transaction("2", tester: "a"))
        log["1"]?.testerID = "b"
        #expect(log.records(in: .tester("a")).map(\.id) == ["2"])
        #expect(log.records(in: .tester("b")).map(\.id) == ["1"])
        #expect(log.map(\.id) == ["1", "2"], "the order stays")
    }

    @Test func theJournalHoldsOnlyWhatChanged() throws {
        var state = SandboxState()
        for index in 0..<50 { state.transactions.append(transaction("\(index)", tester: "a")) }
        state.clearJournal()
        #expect(!state.hasUnsavedRows)
        state.transactions["7"]?.isFinished = true
        state.testers["a"] = SandboxTester(id: "a", name: "a", createdAt: Date(timeIntervalSince1970: 0))
        let changes = try state.changes(encoder: JSONEncoder())
        #expect(changes.rowCount == 2)
        #expect(Set(changes.tables.map(\.name)) == ["transactions", "testers"])
        state.clearJournal()
        #expect(try state.changes(encoder: JSONEncoder()).rowCount == 0)
    }

    @Test func encodesAsAPlainArray() throws {
        let log: RecordLog<SandboxTransaction> = [transaction("1", tester: "a")]
        let data = try JSONEncoder().encode(log)
        #expect(try JSONDecoder().decode([SandboxTransaction].self, from: data).map(\.id) == ["1"])
        #expect(try JSONDecoder().decode(RecordLog<SandboxTransaction>.self, from: data) == log)
    }
}

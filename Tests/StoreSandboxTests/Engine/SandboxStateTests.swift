import AppStoreModels
import Foundation
import StoreSandbox
import Testing

@Suite struct SandboxStateTests {
    @Test func fileStoreSurvivesARestart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kakin-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var state = SandboxState()
        let created = Date(timeIntervalSince1970: 1_790_000_000.123)
        state.testers["t1"] = SandboxTester(id: "t1", name: "tester@example.com", storefront: "JPN", createdAt: created)
        let id = state.takeTransactionID()
        state.transactions.append(
            SandboxTransaction(
                id: id, originalID: id, testerID: "t1", productID: "p", productType: .consumable, purchaseDate: created,
                originalPurchaseDate: created, storefront: "JPN", storefrontID: "143462", currency: "JPY",
                priceMilliunits: 100_000, appTransactionID: "7"))
        #expect(try FileStateStore(directory: directory).load() == nil)
        try FileStateStore(directory: directory).save(state)
        let loaded = try #require(try FileStateStore(directory: directory).load())
        #expect(loaded == state)
        #expect(loaded.nextTransactionNumber == state.nextTransactionNumber)
    }

    @Test func aCorruptStateFileIsATypedError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kakin-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("{not json".utf8).write(to: directory.appendingPathComponent("state.json"))
        #expect(throws: SandboxStateError.self) { try FileStateStore(directory: directory).load() }
    }

    @Test func transactionIDsAreNumericAndIncreasing() {
        var state = SandboxState()
        let first = state.takeTransactionID()
        let second = state.takeTransactionID()
        #expect(UInt64(first)! + 1 == UInt64(second)!)
    }
}

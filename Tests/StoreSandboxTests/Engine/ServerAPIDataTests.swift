import AppStoreModels
import AppStoreSecurity
import Foundation
import StoreSandbox
import Testing

@Suite struct ServerAPIDataTests {
    @Test func historyPagesTwentyAtATimeWithFilters() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "h@example.com")
        var last: SandboxTransaction?
        for _ in 0..<45 {
            last = try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points")).transaction
            fixture.days(1)
        }
        let removeAd = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "removeAd")).transaction)
        let anyID = try #require(last?.id)
        let verifier = try fixture.engine.signer.makeVerifier()

        var ids: [String] = []
        var request = TransactionHistoryRequest()
        var pages = 0
        while true {
            let page = try await fixture.engine.history(for: anyID, request: request)
            pages += 1
            #expect(page.bundleID == "com.example.kakin")
            #expect(page.environment == .sandbox)
            #expect((page.signedTransactions?.count ?? 0) <= 20)
            for signed in page.signedTransactions ?? [] {
                ids.append(try await verifier.verifyTransaction(signed).transactionID ?? "")
            }
            guard page.hasMore == true else { break }
            request.revision = page.revision
        }
        #expect(pages == 3)
        #expect(ids.count == 46)
        #expect(ids == ids.sorted(), "ascending purchase dates by default")

        let onlyNonConsumables = try await fixture.engine.history(
            for: removeAd.id, request: TransactionHistoryRequest(productTypes: [.nonConsumable]))
        #expect(onlyNonConsumables.signedTransactions?.count == 1)
        let newestFirst = try await fixture.engine.history(
            for: anyID, request: TransactionHistoryRequest(sort: .descending))
        await #expect(
            try verifier.verifyTransaction(try #require(newestFirst.signedTransactions?.first)).transactionID
                == removeAd.id)
        let window = try await fixture.engine.history(
            for: anyID,
            request: TransactionHistoryRequest(
                startDate: EngineFixture.start, endDate: EngineFixture.start.addingTimeInterval(3 * 86_400)))
        #expect(window.signedTransactions?.count == 3)
    }

    @Test func v1LeavesOutFinishedConsumables() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "h@example.com")
        let points = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points")).transaction)
        try await fixture.engine.finish(points.id, testerID: tester.id)
        #expect(
            try await fixture.engine.history(for: points.id, request: .init(), version: .v1).signedTransactions?.isEmpty
                == true)
        #expect(
            try await fixture.engine.history(for: points.id, request: .init(), version: .v2).signedTransactions?.count
                == 1)
    }

    @Test func unknownIDsAndForeignRevisionsAreTypedErrors() async throws {
        let fixture = try EngineFixture()
        await #expect(throws: SandboxError(.unknownTransaction, "")) {
            try await fixture.engine.history(for: "123", request: .init())
        }
        let tester = try await fixture.engine.createTester(name: "h@example.com")
        let points = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points")).transaction)
        await #expect(throws: SandboxError(.invalidRequest, "")) {
            try await fixture.engine.history(for: points.id, request: TransactionHistoryRequest(revision: "garbage"))
        }
        #expect(try await fixture.engine.customer(of: points.appTransactionID) == tester.id)
    }

    @Test func statusesAndRefunds() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "h@example.com")
        let monthly = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthly")).transaction)
        let statuses = try await fixture.engine.subscriptionStatuses(for: monthly.id)
        let item = try #require(statuses.data?.first?.lastTransactions?.first)
        #expect(statuses.data?.first?.subscriptionGroupIdentifier == "premium")
        #expect(item.status == .active)
        let verifier = try fixture.engine.signer.makeVerifier()
        await #expect(try verifier.verifyRenewalInfo(try #require(item.signedRenewalInfo)).autoRenewStatus == .on)
        #expect(
            try await fixture.engine.subscriptionStatuses(for: monthly.id, statuses: [.expired]).data?.isEmpty == true)

        #expect(try await fixture.engine.refundHistory(for: monthly.id).signedTransactions?.isEmpty == true)
        try await fixture.engine.refund(monthly.id)
        let refunds = try await fixture.engine.refundHistory(for: monthly.id)
        let refunded = try await verifier.verifyTransaction(try #require(refunds.signedTransactions?.first))
        #expect(refunded.revocationDate != nil)
        #expect(
            try await fixture.engine.subscriptionStatuses(for: monthly.id).data?.first?.lastTransactions?.first?.status
                == .revoked)
    }
}

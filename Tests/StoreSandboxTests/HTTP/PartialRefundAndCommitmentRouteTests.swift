import AppStoreModels
import AppStoreSecurity
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import StoreSandbox
import Testing

@Suite struct PartialRefundAndCommitmentRouteTests {
    func makeService() throws -> SandboxService {
        let catalog = try ExampleApp.catalog()
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: EngineFixture.authority, clock: .manual(at: EngineFixture.start),
            commitmentPlans: true)
        return SandboxService(engine: engine, catalog: catalog, configuration: .init(sharedSecret: "secret"))
    }

    @Test func theControlAPIRefundsAShareAndTheDeviceAPIBuysAMonthlyPlan() async throws {
        let service = try makeService()
        let verifier = try service.engine.signer.makeVerifier()
        let app = Application(router: service.router())
        try await app.test(.router) { client in
            let created = try await client.execute(
                uri: "/v1/control/testers", method: .post, body: SandboxServiceTests.json(["name": "m@example.com"]))
            let tester = try #require(SandboxServiceTests.object(created.body)["id"] as? String)

            let paid = try await client.execute(
                uri: "/v1/device/payments", method: .post,
                body: SandboxServiceTests.json(["testerID": tester, "productID": "com.example.kakin.increasePoints"]))
            let points = try #require(
                (SandboxServiceTests.object(paid.body)["transaction"] as? [String: Any])?["jwsRepresentation"]
                    as? String)
            let id = try #require(try await verifier.verifyTransaction(points).transactionID)
            let refused = try await client.execute(
                uri: "/v1/control/transactions/\(id)/refund", method: .post,
                body: SandboxServiceTests.json(["percentage": 100_001]))
            #expect(refused.status == .badRequest)
            #expect(String(buffer: refused.body).contains("invalidRefundPercentage"))
            let refunded = try await client.execute(
                uri: "/v1/control/transactions/\(id)/refund", method: .post,
                body: SandboxServiceTests.json(["percentage": 50_000]))
            #expect(refunded.status == .ok)
            let transaction = try await service.engine.transaction(id)
            #expect(transaction.revocationType == .refundProrated)
            #expect(transaction.revocationPercentage == 50_000)

            let monthly = try await client.execute(
                uri: "/v1/device/payments", method: .post,
                body: SandboxServiceTests.json([
                    "testerID": tester, "productID": "com.example.kakin.premium.yearly", "billingPlanType": "MONTHLY",
                ]))
            let jws = try #require(
                (SandboxServiceTests.object(monthly.body)["transaction"] as? [String: Any])?["jwsRepresentation"]
                    as? String)
            let signed = try await verifier.verifyTransaction(jws)
            #expect(signed.billingPlanType == .monthly)
            #expect(signed.price == 4_990)
            #expect(signed.commitmentInfo?.billingPeriodNumber == 1)

            let noPlan = try await client.execute(
                uri: "/v1/device/payments", method: .post,
                body: SandboxServiceTests.json([
                    "testerID": tester, "productID": "com.example.kakin.removeAd", "billingPlanType": "MONTHLY",
                ]))
            #expect(noPlan.status == .badRequest)
            #expect(String(buffer: noPlan.body).contains("billingPlanUnavailable"))
        }
    }
}

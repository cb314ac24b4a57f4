import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Foundation
import KakinTestSupport
import StoreSandbox
import Testing

/// Apple's own App Store Server Library (Python), given the sandbox root, accepts every kind of
/// signed data the sandbox emits. Skipped, with a message, when the library is not installed.
@Suite struct AppleVerifierInteropTests {
    @Test(.enabled(if: ApplePythonLibrary.available, ApplePythonLibrary.skipMessage))
    func applesVerifierAcceptsEverythingTheSandboxSigns() async throws {
        // Real time: Apple's verifier checks the chain at the signing date against its own clock rules.
        let now = Date()
        let authority = try SandboxCertificateAuthority.generate(now: now)
        let engine = try ExampleSandbox.engine(
            products: EngineFixture.catalog, authority: authority, clock: .manual(at: now))
        let tester = try await engine.createTester(name: "py@example.com")
        let bought = try #require(
            try await engine.purchase(.init(testerID: tester.id, productID: "monthly")).transaction)
        let signer = engine.signer
        let transaction = try signer.signTransaction(bought, at: now)
        let renewal = try signer.signRenewalInfo(
            try await engine.renewalInfo(originalTransactionID: bought.id), at: now)
        let event = try #require(await engine.events().first)
        let notification = try #require(try await engine.signedNotification(for: event).signedPayload)
        let appTransaction = try await engine.signedAppTransaction(for: tester.id)
        let script = """
            import base64, sys
            from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
            from appstoreserverlibrary.models.Environment import Environment
            verifier = SignedDataVerifier([base64.b64decode(sys.argv[1])], False, Environment.SANDBOX, "\(ExampleApp.bundleID)", \(ExampleApp.appAppleID))
            t = verifier.verify_and_decode_signed_transaction(sys.argv[2])
            r = verifier.verify_and_decode_renewal_info(sys.argv[3])
            n = verifier.verify_and_decode_notification(sys.argv[4])
            a = verifier.verify_and_decode_app_transaction(sys.argv[5])
            print(t.productId, r.autoRenewProductId, n.rawNotificationType, a.bundleId)
            """
        let result = try await Python.run(
            script,
            arguments: [Data(authority.root.derBytes).base64EncodedString(), transaction, renewal, notification, appTransaction])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("monthly monthly SUBSCRIBED com.example.kakin"), "\(result.output)")
    }

    @Test(.enabled(if: ApplePythonLibrary.available, ApplePythonLibrary.skipMessage))
    func applesVerifierDecodesProratedRefundsAndCommitmentPlans() async throws {
        let now = Date()
        let authority = try SandboxCertificateAuthority.generate(now: now)
        let engine = try ExampleSandbox.engine(
            products: EngineFixture.catalog, authority: authority, clock: .manual(at: now),
            commitmentPlans: { id, _ in
                id == "yearly" ? SandboxCommitmentPlan(commitmentPriceMilliunits: 59_880) : nil
            })
        let tester = try await engine.createTester(name: "py@example.com")
        let points = try #require(
            try await engine.purchase(.init(testerID: tester.id, productID: "points")).transaction)
        let refunded = try await engine.refund(points.id, percentage: 67_932)
        let monthly = try #require(
            try await engine.purchase(.init(testerID: tester.id, productID: "yearly", billingPlanType: .monthly))
                .transaction)
        try await engine.setAutoRenew(false, originalTransactionID: monthly.id)
        let signer = engine.signer
        let script = """
            import base64, sys
            from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
            from appstoreserverlibrary.models.Environment import Environment
            verifier = SignedDataVerifier([base64.b64decode(sys.argv[1])], False, Environment.SANDBOX, "\(ExampleApp.bundleID)", \(ExampleApp.appAppleID))
            r = verifier.verify_and_decode_signed_transaction(sys.argv[2])
            print("refund", r.revocationType.value, r.revocationPercentage, r.revocationDate is not None)
            m = verifier.verify_and_decode_signed_transaction(sys.argv[3])
            c = m.commitmentInfo
            print("commitment", m.billingPlanType.value, c.billingPeriodNumber, c.totalBillingPeriods, c.commitmentPrice, c.commitmentExpiresDate, m.price)
            i = verifier.verify_and_decode_renewal_info(sys.argv[4])
            k = i.commitmentInfo
            print("renewal", i.renewalBillingPlanType.value, k.commitmentAutoRenewStatus.value, k.commitmentRenewalBillingPlanType.value, k.commitmentRenewalDate, k.commitmentRenewalPrice, k.commitmentAutoRenewProductId)
            """
        let result = try await Python.run(
            script,
            arguments: [
                Data(authority.root.derBytes).base64EncodedString(), try signer.signTransaction(refunded, at: now),
                try signer.signTransaction(monthly, at: now),
                try signer.signRenewalInfo(try await engine.renewalInfo(originalTransactionID: monthly.id), at: now),
            ])
        #expect(result.status == 0, "\(result.output)")
        let commitmentEnd = try #require(monthly.commitmentInfo?.commitmentExpiresDate)
        let end = Int64((commitmentEnd.timeIntervalSince1970 * 1000).rounded())
        #expect(result.output.contains("refund REFUND_PRORATED 67932 True"), "\(result.output)")
        #expect(result.output.contains("commitment MONTHLY 1 12 59880 \(end) 4990"), "\(result.output)")
        #expect(result.output.contains("renewal MONTHLY 0 MONTHLY \(end) 59880 yearly"), "\(result.output)")
    }
}

import AppStoreModels
import AppStoreSecurity
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinServer
import KakinLedger
import KakinTestSupport
import StoreSandbox
import Testing

/// With revocation checks the chain is validated now, not when the transaction was signed. A
/// transaction an app kept offline until its signing leaf expired is therefore fetched again from
/// the App Store Server API (signed afresh) and recorded; nothing is lost.
@Suite struct LateTransactionTests {
    /// A leaf of the fixture's authority that lives 30 days: what signed the late upload.
    static let shortLived = try! ServerFixture.authority.reissuingLeaf(
        notValidBefore: ServerFixture.start.addingTimeInterval(-86_400),
        notValidAfter: ServerFixture.start.addingTimeInterval(30 * 86_400))

    func service(
        _ fixture: ServerFixture, revocation: RevocationMode, access: ServerAPIAccess?
    ) -> PurchaseService {
        let clock = fixture.clock
        return PurchaseService.example(store: fixture.store, root: ServerFixture.authority.root, now: { clock.now() }) {
            $0.serverAPI = access
            $0.revocation = revocation
        }
    }

    /// A purchase signed by the short-lived leaf at the time of purchase, then 40 days of offline.
    func lateUpload(_ fixture: ServerFixture) async throws -> (SandboxTransaction, String) {
        let (transaction, _) = try await fixture.buy("removeAd")
        let oldSigner = SandboxSigner(
            authority: Self.shortLived, bundleID: ServerFixture.bundleID, appAppleID: ExampleApp.appAppleID)
        let jws = try oldSigner.signTransaction(transaction, at: fixture.clock.now())
        fixture.clock.advance(by: 40 * 86_400)
        return (transaction, jws)
    }

    @Test func expiredLeafIsFetchedAgainAndRecorded() async throws {
        let fixture = try await ServerFixture()
        let (transaction, jws) = try await lateUpload(fixture)
        try await fixture.withServerAPI { access in
            let service = service(fixture, revocation: .bestEffort, access: access)
            let outcome = try await service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "late")
            #expect(outcome.isNew)
            let customer = try await service.customer(bundleID: ServerFixture.bundleID, appUserID: "late")
            let recorded = try #require(customer.transactions.first { $0.transactionID == transaction.id })
            // The fresh JWS is recorded: it verifies now, the upload no longer does.
            #expect(recorded.signedTransaction != jws)
            let fresh = try #require(recorded.signedTransaction)
            let verifier = try fixture.engine.signer.makeVerifier(now: { fixture.clock.now() })
            #expect(try await verifier.verify(fresh, as: JWSTransactionDecodedPayload.self, checking: [], at: fixture.clock.now()).transactionID == transaction.id)
            // Posted again, it is recognised: nothing is granted twice.
            let again = try await service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "late")
            #expect(!again.isNew)
        }
        try await fixture.store.shutdown()
    }

    @Test func withoutServerAPIAccessTheUploadIsRefusedRetryably() async throws {
        let fixture = try await ServerFixture()
        let (_, jws) = try await lateUpload(fixture)
        let service = service(fixture, revocation: .bestEffort, access: nil)
        let error = await #expect(throws: ServerError.self) {
            try await service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "late")
        }
        #expect(error?.code == .appleUnavailable && error?.isRetryable == true, "\(String(describing: error))")
        #expect(error?.httpStatus == 503)
        #expect(error?.cause == "certificateExpired")
        try await fixture.store.shutdown()
    }

    @Test func withRevocationOffTheSigningDateDecides() async throws {
        let fixture = try await ServerFixture()
        let (_, jws) = try await lateUpload(fixture)
        let service = service(fixture, revocation: .off, access: nil)
        let outcome = try await service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "late")
        #expect(outcome.isNew)
        try await fixture.store.shutdown()
    }
}

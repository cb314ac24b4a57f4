import AppStoreModels
import Crypto
import Foundation
import Synchronization
import Testing
import X509

@testable import AppStoreSecurity
import AppStoreTesting

/// Revocation through the real verifier path: `JWSVerifier` with a `RevocationChecker` whose OCSP
/// requests reach a responder played by the test (good, revoked, down, forged, stale), on an
/// injected clock. swift-certificates verifies every answer.
@Suite struct RevocationCheckerTests {
    static let url = "http://ocsp.kakin.test/ocsp"
    static let now = TestAuthority.now
    static let authority: SandboxCertificateAuthority = try! SandboxCertificateAuthority.generate(
        now: now, ocspURL: url)

    /// A manual clock.
    final class Clock: Sendable {
        private let time = Mutex(RevocationCheckerTests.now)
        var now: Date { time.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
    }

    /// The responder the test plays: what it says of each certificate, and how it misbehaves.
    final class Responder: OCSPTransport, Sendable {
        enum Behaviour: Sendable {
            case answering
            case down
            case httpError(Int)
            /// Signs with a key that is not the issuer's.
            case forging
            /// Answers dated `seconds` in the past (thisUpdate and nextUpdate).
            case stale(seconds: TimeInterval)
        }

        struct State {
            var behaviour: Behaviour = .answering
            var revoked: Set<[UInt8]> = []
            var requests = 0
            var urls: [String] = []
        }

        let state = Mutex(State())
        let authority: SandboxCertificateAuthority
        let clock: Clock
        let forger = P384.Signing.PrivateKey()

        init(authority: SandboxCertificateAuthority = RevocationCheckerTests.authority, clock: Clock) {
            self.authority = authority
            self.clock = clock
        }

        var requests: Int { state.withLock { $0.requests } }
        func set(_ behaviour: Behaviour) { state.withLock { $0.behaviour = behaviour } }
        func revoke(_ certificate: Certificate) { state.withLock { _ = $0.revoked.insert(certificate.serialNumber.bytes.map { $0 }) } }

        func post(_ request: [UInt8], to url: String) async throws -> (status: Int, body: [UInt8]) {
            let (behaviour, revoked) = state.withLock { state in
                state.requests += 1
                state.urls.append(url)
                return (state.behaviour, state.revoked)
            }
            switch behaviour {
            case .down: throw URLError(.cannotConnectToHost)
            case .httpError(let status): return (status, [])
            default: break
            }
            let parsed = try OCSPRequestMessage(derEncoded: request)
            guard let id = parsed.certificateIDs.first else { return (200, OCSPResponseMessage.unsuccessful(.malformedRequest)) }
            let (issuer, issuerKey): (Certificate, P384.Signing.PrivateKey) =
                id.identifies(authority.leaf, issuedBy: authority.intermediate)
                ? (authority.intermediate, authority.intermediateKey) : (authority.root, authority.rootKey)
            var time = clock.now
            if case .stale(let seconds) = behaviour { time -= seconds }
            let status: OCSPCertificateStatus =
                revoked.contains(Array(id.serialNumber.bytes)) ? .revoked(at: time.addingTimeInterval(-60)) : .good
            let answer = OCSPSingleAnswer(
                certificateID: id, status: status, thisUpdate: time, nextUpdate: time.addingTimeInterval(3600))
            let key: P384.Signing.PrivateKey
            if case .forging = behaviour { key = forger } else { key = issuerKey }
            _ = issuer
            let body = try OCSPResponseMessage.signed(
                answers: [answer], producedAt: time, nonce: parsed.nonce, responder: issuer,
                key: Certificate.PrivateKey(key))
            return (200, body)
        }
    }

    /// Collects the checker's events.
    final class Events: Sendable {
        let all = Mutex<[RevocationEvent]>([])
        func record(_ event: RevocationEvent) { all.withLock { $0.append(event) } }
        var outcomes: [RevocationEvent.Outcome] { all.withLock { $0.map(\.outcome) } }
    }

    struct Fixture {
        let clock = Clock()
        let events = Events()
        let responder: Responder
        let verifier: JWSVerifier
        let jws: String

        init(mode: RevocationMode, authority: SandboxCertificateAuthority = RevocationCheckerTests.authority) throws {
            let clock = clock
            let events = events
            responder = Responder(authority: authority, clock: clock)
            let checker = RevocationChecker(
                mode: mode, transport: responder, now: { clock.now }, observer: { events.record($0) })
            verifier = JWSVerifier(rootCertificates: [authority.root], revocation: checker, now: { clock.now })
            jws = try JWSSigner(identity: authority.signingIdentity).sign(
                ClaimsPayload(signedDate: RevocationCheckerTests.now))
        }

        @discardableResult
        func verify() async throws(AppStoreSecurityError) -> JWSVerifier.Verified<ClaimsPayload> {
            try await verifier.verify(jws, as: ClaimsPayload.self)
        }
    }

    @Test func goodAnswersAreCachedUntilTheirNextUpdate() async throws {
        let fixture = try Fixture(mode: .require)
        try await fixture.verify()
        // One request for the leaf, one for the intermediate, at the URL the certificates name.
        #expect(fixture.responder.requests == 2)
        #expect(fixture.responder.state.withLock { $0.urls } == [Self.url, Self.url])
        #expect(fixture.events.outcomes == [.good])
        fixture.clock.advance(3000)
        try await fixture.verify()
        #expect(fixture.responder.requests == 2, "a good answer holds until its nextUpdate")
        fixture.clock.advance(601)
        try await fixture.verify()
        #expect(fixture.responder.requests == 4, "past nextUpdate the responder is asked again")
    }

    @Test(arguments: [RevocationMode.require, .bestEffort])
    func revokedLeafIsRejectedForGood(mode: RevocationMode) async throws {
        let fixture = try Fixture(mode: mode)
        fixture.responder.revoke(Self.authority.leaf)
        let error = await #expect(throws: AppStoreSecurityError(.certificateRevoked)) { try await fixture.verify() }
        #expect(error?.isRetryable == false)
        #expect(error?.reason.contains("leaf") == true, "\(String(describing: error))")
        #expect(fixture.events.outcomes == [.revoked])
        // A revocation is kept: the responder is not asked again.
        let asked = fixture.responder.requests
        fixture.clock.advance(86_400)
        await #expect(throws: AppStoreSecurityError(.certificateRevoked)) { try await fixture.verify() }
        #expect(fixture.responder.requests == asked)
    }

    @Test(arguments: [RevocationMode.require, .bestEffort])
    func revokedIntermediateIsRejected(mode: RevocationMode) async throws {
        let fixture = try Fixture(mode: mode)
        fixture.responder.revoke(Self.authority.intermediate)
        let error = await #expect(throws: AppStoreSecurityError(.certificateRevoked)) { try await fixture.verify() }
        #expect(error?.reason.contains("intermediate") == true, "\(String(describing: error))")
    }

    @Test func responderDownUnderRequireIsRetryable() async throws {
        let fixture = try Fixture(mode: .require)
        fixture.responder.set(.down)
        let error = await #expect(throws: AppStoreSecurityError(.revocationUnavailable)) { try await fixture.verify() }
        #expect(error?.isRetryable == true)
        #expect(fixture.events.outcomes == [.unavailable])
        // Within the retry interval the answer is the same without asking; after it, a responder
        // that is back lets the chain through.
        fixture.responder.set(.answering)
        let asked = fixture.responder.requests
        await #expect(throws: AppStoreSecurityError(.revocationUnavailable)) { try await fixture.verify() }
        #expect(fixture.responder.requests == asked)
        fixture.clock.advance(31)
        try await fixture.verify()
        #expect(fixture.events.outcomes == [.unavailable, .good])
    }

    @Test func responderDownUnderBestEffortPassesAndIsReported() async throws {
        let fixture = try Fixture(mode: .bestEffort)
        fixture.responder.set(.down)
        try await fixture.verify()
        #expect(fixture.events.outcomes == [.passedUnchecked])
        #expect(fixture.events.all.withLock { $0.first?.detail.contains("could not be reached") } == true)
    }

    @Test func offAsksNoResponderAndChecksAtTheSigningDate() async throws {
        let fixture = try Fixture(mode: .off)
        fixture.responder.set(.down)
        fixture.clock.advance(10 * 365 * 86_400)  // past the leaf's end: only the signing date counts
        try await fixture.verify()
        #expect(fixture.responder.requests == 0)
        #expect(fixture.events.outcomes.isEmpty)
    }

    @Test func httpErrorIsNoAnswer() async throws {
        let fixture = try Fixture(mode: .require)
        fixture.responder.set(.httpError(500))
        await #expect(throws: AppStoreSecurityError(.revocationUnavailable)) { try await fixture.verify() }
    }

    @Test func forgedAnswerIsNeverAGoodOne() async throws {
        let strict = try Fixture(mode: .require)
        strict.responder.set(.forging)
        await #expect(throws: AppStoreSecurityError(.revocationUnavailable)) { try await strict.verify() }

        // Forged "revoked" answers do not reject either: only a verified answer can.
        let lenient = try Fixture(mode: .bestEffort)
        lenient.responder.set(.forging)
        lenient.responder.revoke(Self.authority.leaf)
        try await lenient.verify()
        #expect(lenient.events.outcomes == [.passedUnchecked])
    }

    @Test func staleAnswerIsNoAnswer() async throws {
        let fixture = try Fixture(mode: .require)
        fixture.responder.set(.stale(seconds: 3 * 3600))
        let error = await #expect(throws: AppStoreSecurityError(.revocationUnavailable)) { try await fixture.verify() }
        #expect(error?.reason.contains("nextUpdate") == true, "\(String(describing: error))")
    }

    @Test func certificateWithoutResponderFailsOnlyWhenRequired() async throws {
        let plain = TestAuthority.shared  // issued without an OCSP URL
        let strict = try Fixture(mode: .require, authority: plain)
        await #expect(throws: AppStoreSecurityError(.untrustedChain)) { try await strict.verify() }
        let lenient = try Fixture(mode: .bestEffort, authority: plain)
        try await lenient.verify()
        #expect(lenient.events.outcomes == [.passedUnchecked])
        #expect(lenient.responder.requests == 0)
    }

    @Test func withRevocationTheChainMustBeValidNow() async throws {
        // Signed while the leaf was valid; checked after it expired.
        let leafEnd = Self.authority.leaf.notValidAfter
        for mode in [RevocationMode.require, .bestEffort] {
            let fixture = try Fixture(mode: mode)
            fixture.clock.advance(leafEnd.timeIntervalSince(Self.now) + 60)
            await #expect(throws: AppStoreSecurityError(.certificateExpired)) { try await fixture.verify() }
        }
        let off = try Fixture(mode: .off)
        off.clock.advance(leafEnd.timeIntervalSince(Self.now) + 60)
        try await off.verify()
    }

    @Test func concurrentChecksShareOneTripToTheResponder() async throws {
        let fixture = try Fixture(mode: .require)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<32 { group.addTask { try await fixture.verify() } }
            try await group.waitForAll()
        }
        #expect(fixture.responder.requests == 2)
    }
}

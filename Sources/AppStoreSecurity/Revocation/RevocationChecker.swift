import Crypto
public import Foundation
import Synchronization
@_spi(FixedExpiryValidationTime) public import X509

/// Checks the leaf and the intermediate of a verified App Store chain with OCSP, as Apple's
/// libraries do with online checks on, and remembers the verdict.
///
/// The decision is swift-certificates': a `Verifier` runs its RFC 5280 policy at the current
/// time and its `OCSPVerifierPolicy`, which asks the responder named in each certificate's
/// Authority Information Access extension and verifies the answer (signed by the issuer or by a
/// responder the issuer delegated to, nonce echoed or absent, `thisUpdate` and `nextUpdate`
/// around now). This type only carries requests (``OCSPTransport``), tells the outcomes apart,
/// and caches them:
///
/// - **good**: kept until the earliest `nextUpdate` of the answers (15 minutes when an answer has
///   none, as Apple's library caches a verified chain);
/// - **revoked** (a verified answer says so): a permanent ``AppStoreSecurityError/Code/certificateRevoked``,
///   kept;
/// - **no usable answer** (no response, an HTTP error, an answer that does not verify, is out of
///   date or says "unknown"): under ``RevocationMode/require`` the retryable
///   ``AppStoreSecurityError/Code/revocationUnavailable``, under ``RevocationMode/bestEffort`` a pass.
///   Either is kept for ``retryInterval`` so a responder that is down is not asked by every request.
///
/// A forged or stale answer counts as no answer: whoever can forge one can also block the
/// responder, so it earns neither an accept under `require` nor a rejection under `bestEffort`.
/// Concurrent checks of one chain share one trip to the responder. Every outcome is reported to
/// the observer given at creation, so the server can log and count passes.
public final class RevocationChecker: Sendable {
    /// How strict the check is; ``RevocationMode/off`` makes ``check(leaf:intermediate:root:)``
    /// return at once.
    public let mode: RevocationMode
    /// How long a good answer without `nextUpdate` is trusted.
    public let goodAnswerLifetime: TimeInterval
    /// How long an outcome without a usable answer is kept before the responder is asked again.
    public let retryInterval: TimeInterval
    private let transport: any OCSPTransport
    private let now: @Sendable () -> Date
    private let observer: (@Sendable (RevocationEvent) -> Void)?
    private let state = Mutex(State())

    private struct State {
        var verdicts: [Key: Verdict] = [:]
        var inFlight: [Key: Task<Verdict, Never>] = [:]
    }

    private struct Key: Hashable {
        let digest: SHA256Digest
        init(_ leaf: Certificate, _ intermediate: Certificate) {
            var hash = SHA256()
            hash.update(data: (try? leaf.derEncoded()) ?? [])
            hash.update(data: (try? intermediate.derEncoded()) ?? [])
            digest = hash.finalize()
        }
    }

    private enum Verdict: Sendable {
        /// Both certificates are not revoked, as far as can be told, until `until`.
        case pass(until: Date)
        /// Rejected; `until` is `nil` for a permanent rejection.
        case fail(AppStoreSecurityError, until: Date?)

        func holds(at time: Date) -> Bool {
            switch self {
            case .pass(let until): time < until
            case .fail(_, let until): until.map { time < $0 } ?? true
            }
        }
    }

    /// The most verdicts kept; beyond it the cache starts over (App Store chains are few).
    private static let capacity = 256

    /// Creates a checker.
    ///
    /// - Parameters:
    ///   - mode: how strict to be.
    ///   - transport: how requests reach responders; HTTP by default.
    ///   - goodAnswerLifetime: how long a good answer without `nextUpdate` is kept (15 minutes).
    ///   - retryInterval: how long to wait before asking again after no usable answer (30 seconds).
    ///   - now: the clock; also the time the chain and the answers are checked at.
    ///   - observer: told of every outcome.
    public init(
        mode: RevocationMode, transport: any OCSPTransport = URLSessionOCSPTransport(),
        goodAnswerLifetime: TimeInterval = 15 * 60, retryInterval: TimeInterval = 30,
        now: @escaping @Sendable () -> Date = { Date() },
        observer: (@Sendable (RevocationEvent) -> Void)? = nil
    ) {
        self.mode = mode
        self.transport = transport
        self.goodAnswerLifetime = goodAnswerLifetime
        self.retryInterval = retryInterval
        self.now = now
        self.observer = observer
    }

    /// Checks `leaf` and `intermediate` (already verified to chain to `root`); returns the time
    /// until which the verdict holds, after which the chain must be checked again.
    public func check(
        leaf: Certificate, intermediate: Certificate, root: Certificate
    ) async throws(AppStoreSecurityError) -> Date {
        guard mode != .off else { return .distantFuture }
        let key = Key(leaf, intermediate)
        let time = now()
        let (cached, task): (Verdict?, Task<Verdict, Never>?) = state.withLock { state in
            if let verdict = state.verdicts[key], verdict.holds(at: time) { return (verdict, nil) }
            if let running = state.inFlight[key] { return (nil, running) }
            let running = Task { [self] in
                let verdict = await evaluate(leaf: leaf, intermediate: intermediate, root: root)
                self.state.withLock { state in
                    if state.verdicts.count >= Self.capacity { state.verdicts.removeAll(keepingCapacity: true) }
                    state.verdicts[key] = verdict
                    state.inFlight[key] = nil
                }
                return verdict
            }
            state.inFlight[key] = running
            return (nil, running)
        }
        let verdict: Verdict
        if let cached { verdict = cached } else { verdict = await task!.value }
        switch verdict {
        case .pass(let until): return until
        case .fail(let error, _): throw error
        }
    }

    // MARK: - Deciding

    private func evaluate(leaf: Certificate, intermediate: Certificate, root: Certificate) async -> Verdict {
        let time = now()
        let subject = "\(leaf.subject)"
        // A certificate that names no responder cannot be checked: required means rejected.
        for (name, certificate) in [("leaf", leaf), ("intermediate", intermediate)]
        where Self.responderURL(of: certificate) == nil {
            let reason = "the \(name) (\(certificate.subject)) names no OCSP responder"
            if mode == .require {
                report(.unavailable, subject, reason)
                return .fail(
                    AppStoreSecurityError(
                        .untrustedChain, "\(reason), and revocation checks are required",
                        expected: "an Authority Information Access extension with an OCSP URL"),
                    until: nil)
            }
            report(.passedUnchecked, subject, reason)
            return .pass(until: time.addingTimeInterval(retryInterval))
        }

        // Strict first: any answer that is not a verified "good" fails this run.
        let strict = ExchangeLog()
        let strictResult = await run(
            leaf: leaf, intermediate: intermediate, root: root, at: time, failureMode: .hard,
            requester: Requester(transport: transport, log: strict, failHard: true))
        guard let strictFailure = strictResult else {
            let until = strict.earliestNextUpdate() ?? time.addingTimeInterval(goodAnswerLifetime)
            report(.good, subject, "good until \(iso8601(until))")
            return .pass(until: max(until, time.addingTimeInterval(1)))
        }

        // The strict run failed on an answer, not on the network: a lenient run fails only on a
        // verified "revoked", which tells a revocation from an answer that cannot be used.
        var reason = strictFailure
        if let networkFailure = strict.transportFailure {
            reason = networkFailure
        } else {
            let lenient = ExchangeLog()
            let lenientResult = await run(
                leaf: leaf, intermediate: intermediate, root: root, at: time, failureMode: .soft,
                requester: Requester(transport: transport, log: lenient, failHard: false))
            if let revocation = lenientResult, lenient.transportFailure == nil {
                let which = lenient.revokedCertificate(leaf: leaf, intermediate: intermediate, root: root) ?? "leaf or intermediate"
                report(.revoked, subject, "the \(which) is revoked: \(revocation)")
                return .fail(
                    AppStoreSecurityError(
                        .certificateRevoked, "the \(which) certificate has been revoked (OCSP)",
                        found: "\(which == "intermediate" ? intermediate.subject : leaf.subject)"),
                    until: nil)
            }
            if let networkFailure = lenient.transportFailure { reason = networkFailure }
        }
        let retry = time.addingTimeInterval(retryInterval)
        if mode == .require {
            report(.unavailable, subject, reason)
            return .fail(
                AppStoreSecurityError(
                    .revocationUnavailable, "no usable OCSP answer, and revocation checks are required: \(reason)"),
                until: retry)
        }
        report(.passedUnchecked, subject, reason)
        return .pass(until: retry)
    }

    /// One swift-certificates validation at `time` with the OCSP policy; `nil` when the chain
    /// meets it, else why not.
    private func run(
        leaf: Certificate, intermediate: Certificate, root: Certificate, at time: Date,
        failureMode: OCSPFailureMode, requester: Requester
    ) async -> String? {
        var verifier = Verifier(rootCertificates: CertificateStore([root])) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            OCSPVerifierPolicy(failureMode: failureMode, requester: requester, fixedExpiryValidationTime: time)
        }
        switch await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate])) {
        case .validCertificate: return nil
        case .couldNotValidate(let failures):
            return failures.first.map { "\($0.policyFailureReason)" } ?? "no chain to the trusted root"
        }
    }

    private func report(_ outcome: RevocationEvent.Outcome, _ subject: String, _ detail: String) {
        observer?(RevocationEvent(outcome: outcome, mode: mode, leafSubject: subject, detail: detail))
    }

    /// The first OCSP URL in `certificate`'s Authority Information Access extension.
    static func responderURL(of certificate: Certificate) -> String? {
        guard let access = try? certificate.extensions.authorityInformationAccess else { return nil }
        for description in access where description.method == .ocspServer {
            if case .uniformResourceIdentifier(let url) = description.location { return url }
        }
        return nil
    }
}

/// One outcome of a revocation check, for logs and metrics.
public struct RevocationEvent: Sendable, Hashable {
    /// How a check ended.
    public enum Outcome: String, Sendable, Hashable {
        /// Verified good answers for the leaf and the intermediate.
        case good
        /// A verified answer says the leaf or the intermediate is revoked.
        case revoked
        /// No usable answer, and revocation is required: the chain was rejected, retryably.
        case unavailable
        /// No usable answer, and revocation is best effort: the chain passed unchecked.
        case passedUnchecked
    }

    /// How the check ended.
    public let outcome: Outcome
    /// The mode the check ran under, which decided what a missing answer meant.
    public let mode: RevocationMode
    /// The leaf's subject, to tell chains apart in a log.
    public let leafSubject: String
    /// What happened, in a sentence.
    public let detail: String
}

/// What one validation's requests brought back: the answers' bytes, or why none came.
private final class ExchangeLog: Sendable {
    private let state = Mutex<(answers: [[UInt8]], failure: String?)>(([], nil))

    func record(answer: [UInt8]) { state.withLock { $0.answers.append(answer) } }
    func record(failure: String) { state.withLock { $0.failure = $0.failure ?? failure } }

    var transportFailure: String? { state.withLock { $0.failure } }

    /// The earliest `nextUpdate` among the answers (read, not verified: the policy verified them).
    func earliestNextUpdate() -> Date? {
        let answers = state.withLock { $0.answers }
        return answers.compactMap { try? OCSPResponseMessage(derEncoded: $0) }
            .flatMap(\.answers).compactMap(\.nextUpdate).min()
    }

    /// Which certificate an answer says is revoked: "leaf" or "intermediate".
    func revokedCertificate(leaf: Certificate, intermediate: Certificate, root: Certificate) -> String? {
        let answers = state.withLock { $0.answers }
        for answer in answers.compactMap({ try? OCSPResponseMessage(derEncoded: $0) }).flatMap(\.answers) {
            guard case .revoked = answer.status else { continue }
            if answer.certificateID.identifies(leaf, issuedBy: intermediate) { return "leaf" }
            if answer.certificateID.identifies(intermediate, issuedBy: root) { return "intermediate" }
        }
        return nil
    }
}

/// swift-certificates' OCSP requester over an ``OCSPTransport``: each answer is logged; a
/// responder that cannot be reached fails a strict run (a terminal error) and is passed over by a
/// lenient one.
private struct Requester: OCSPRequester {
    let transport: any OCSPTransport
    let log: ExchangeLog
    let failHard: Bool

    struct Unreachable: Error, CustomStringConvertible {
        let description: String
    }

    func query(request: [UInt8], uri: String) async -> OCSPRequesterQueryResult {
        let failure: String
        do {
            let (status, body) = try await transport.post(request, to: uri)
            if status == 200 {
                log.record(answer: body)
                return .response(body)
            }
            failure = "the OCSP responder \(uri) answered HTTP \(status)"
        } catch {
            failure = "the OCSP responder \(uri) could not be reached: \(error)"
        }
        log.record(failure: failure)
        return failHard ? .terminalError(Unreachable(description: failure)) : .nonTerminalError(Unreachable(description: failure))
    }
}

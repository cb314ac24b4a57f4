import AppStoreSecurity
import AppStoreTesting
import Foundation
import Synchronization
import Testing
@_spi(FixedExpiryValidationTime) import X509

/// An OCSP requester that never touches the network: it reads the request with
/// `OCSPRequestMessage`, remembers it, and lets the test answer.
final class InProcessRequester: OCSPRequester {
    struct Query: Sendable {
        var request: OCSPRequestMessage
        var uri: String
    }

    let answer: @Sendable (OCSPRequestMessage) throws -> [UInt8]
    private let recorded = Mutex<[Query]>([])

    init(answer: @escaping @Sendable (OCSPRequestMessage) throws -> [UInt8]) {
        self.answer = answer
    }

    /// A requester answered by `responder` at `now`.
    convenience init(responder: SandboxOCSPResponder, now: Date) {
        self.init { request in responder.response(to: request, at: now) }
    }

    var queries: [Query] { recorded.withLock { $0 } }

    func query(request: [UInt8], uri: String) async -> OCSPRequesterQueryResult {
        do {
            let message = try OCSPRequestMessage(derEncoded: request)
            recorded.withLock { $0.append(Query(request: message, uri: uri)) }
            return .response(try answer(message))
        } catch {
            Issue.record("the requester could not answer: \(error)")
            return .terminalError(error)
        }
    }
}

enum OCSPCheck {
    /// What a swift-certificates `Verifier` with RFC 5280's policy and `OCSPVerifierPolicy` says
    /// of `chain` (leaf, intermediate, root; the root trusted), at `now`: the OCSP policy is given
    /// the chain the verifier builds, as a server's verifier would give it.
    static func evaluate(
        _ chain: [Certificate], requester: InProcessRequester, mode: OCSPFailureMode = .hard, now: Date
    ) async -> CertificateValidationResult {
        var verifier = Verifier(rootCertificates: CertificateStore([chain[2]])) {
            RFC5280Policy(fixedExpiryValidationTime: now)
            OCSPVerifierPolicy(failureMode: mode, requester: requester, fixedExpiryValidationTime: now)
        }
        return await verifier.validate(leaf: chain[0], intermediates: CertificateStore([chain[1]]))
    }

    static func accepted(_ result: CertificateValidationResult) -> Bool {
        if case .validCertificate = result { return true }
        return false
    }
}

extension Array where Element == UInt8 {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}

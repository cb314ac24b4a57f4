package import AppStoreSecurity
public import Foundation
import X509

/// The OCSP responder of a ``SandboxCertificateAuthority``: answers what the authority issued,
/// as the App Store's responder answers for Apple's certificates.
///
/// Each answer is signed by the issuer of the certificate asked about (the intermediate's key
/// for a leaf, the root's key for an intermediate), with a responder ID by key. A verifier
/// accepts such an answer without any delegated responder certificate: that is what Apple's
/// Python library and swift-certificates' `OCSPVerifierPolicy` expect.
///
/// For each `CertID` of a request:
/// - a certificate the authority issued (current or retired) is `good`, or `revoked` at its
///   revocation date;
/// - a serial number the named issuer never issued is `unknown`.
///
/// A request in SHA-1 or SHA-256 is answered in the same algorithm, and its nonce is echoed.
/// The answers cover `validity` from the time of the request (`thisUpdate` = now, `nextUpdate`
/// = now + `validity`). A request that cannot be read is answered `malformedRequest`; one that
/// names no issuer of this authority is answered `unauthorized`.
public struct SandboxOCSPResponder: Sendable {
    /// The authority whose certificates are answered for.
    public var authority: SandboxCertificateAuthority
    /// How long an answer stays fresh: `nextUpdate` − `thisUpdate`.
    public var validity: TimeInterval

    /// Creates a responder; answers are fresh for an hour unless told otherwise.
    public init(authority: SandboxCertificateAuthority, validity: TimeInterval = 3_600) {
        self.authority = authority
        self.validity = validity
    }

    /// The DER `OCSPResponse` to a DER `OCSPRequest`, at `now`.
    public func response(to request: [UInt8], at now: Date) -> [UInt8] {
        guard let message = try? OCSPRequestMessage(derEncoded: request) else {
            return OCSPResponseMessage.unsuccessful(.malformedRequest)
        }
        return response(to: message, at: now)
    }

    /// The DER `OCSPResponse` to a request, at `now`.
    ///
    /// One response carries one signature, so it answers the `CertID`s whose issuer is the
    /// issuer of the first `CertID` this authority knows; the others are left out, as RFC 6960
    /// allows.
    package func response(to request: OCSPRequestMessage, at now: Date) -> [UInt8] {
        let issuers = authority.ocspIssuers
        guard
            let signer = request.certificateIDs.lazy.compactMap({ id in
                issuers.first { id.names(issuer: $0.certificate) }
            }).first
        else {
            return OCSPResponseMessage.unsuccessful(.unauthorized)
        }
        let issued = authority.issuedCertificates
        let answers = request.certificateIDs.filter { $0.names(issuer: signer.certificate) }.map { id in
            let status: OCSPCertificateStatus
            if let match = issued.first(where: { id.identifies($0.certificate, issuedBy: $0.issuer) }) {
                status = match.revocationDate.map { .revoked(at: $0) } ?? .good
            } else {
                status = .unknown
            }
            return OCSPSingleAnswer(
                certificateID: id, status: status, thisUpdate: now, nextUpdate: now.addingTimeInterval(validity))
        }
        do {
            return try OCSPResponseMessage.signed(
                answers: answers, producedAt: now, nonce: request.nonce, responder: signer.certificate,
                key: signer.key)
        } catch {
            return OCSPResponseMessage.unsuccessful(.internalError)
        }
    }

    /// The status the responder gives a certificate issued by `issuer`, or `nil` when `issuer`
    /// is not one of the authority's.
    package func status(of certificate: Certificate, issuedBy issuer: Certificate) -> OCSPCertificateStatus? {
        let id = OCSPCertificateID(certificate: certificate, issuer: issuer)
        guard authority.ocspIssuers.contains(where: { id.names(issuer: $0.certificate) }) else { return nil }
        guard
            let match = authority.issuedCertificates.first(where: { id.identifies($0.certificate, issuedBy: $0.issuer) }
            )
        else { return .unknown }
        return match.revocationDate.map { .revoked(at: $0) } ?? .good
    }
}

extension SandboxCertificateAuthority {
    /// This authority's OCSP responder.
    public func responder(validity: TimeInterval = 3_600) -> SandboxOCSPResponder {
        SandboxOCSPResponder(authority: self, validity: validity)
    }
}

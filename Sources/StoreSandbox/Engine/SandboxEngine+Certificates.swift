import AppStoreSecurity
public import AppStoreTesting
import Foundation
import Synchronization

/// The sandbox's certificate authority at run time: revocation with rotation, and the OCSP
/// responder that says which certificates are revoked.
extension SandboxEngine {
    /// The signer in use and whether the OCSP responder answers.
    struct CertificateState: Sendable {
        var signer: SandboxSigner
        var responderAvailable = true
    }

    /// The certificate authority whose leaf signs now.
    public nonisolated var authority: SandboxCertificateAuthority { signer.authority }

    /// Revokes the leaf or the intermediate and switches to their replacements (see
    /// AppStoreTesting's `SandboxCertificateAuthority.revoking(_:at:notValidBefore:)`): from now on
    /// everything is signed by the new leaf, under the same root, and the responder answers
    /// `revoked` for the old certificates. The rotated authority is written to the authority's
    /// directory, if any, before it is used. Answers the new authority.
    @discardableResult
    public func revokeCertificate(
        _ kind: SandboxCertificateAuthority.CertificateKind
    ) throws(SandboxError) -> SandboxCertificateAuthority {
        let rotated: SandboxCertificateAuthority
        do { rotated = try authority.revoking(kind, at: realClock(), notValidBefore: newCertificatesStart()) } catch {
            throw SandboxError(.stateUnavailable, "cannot issue new certificates: \(error)")
        }
        try install(rotated)
        return rotated
    }

    /// Makes the intermediate and the leaf name `url` as their OCSP responder, issuing new ones
    /// under the same root when they name another (for a sandbox whose port is known only once
    /// it listens). Nothing changes when they already name it.
    public func useOCSPURL(_ url: String) throws(SandboxError) {
        let current = authority
        if current.ocspURL == url, SandboxCertificateAuthority.ocspResponderURL(of: current.leaf) == url,
            SandboxCertificateAuthority.ocspResponderURL(of: current.intermediate) == url
        {
            return
        }
        let reissued: SandboxCertificateAuthority
        do {
            reissued = try current.reissuing(ocspURL: url, at: realClock(), notValidBefore: newCertificatesStart())
        } catch {
            throw SandboxError(.stateUnavailable, "cannot issue new certificates: \(error)")
        }
        try install(reissued)
    }

    /// New certificates are valid from a day before the earlier of the real time and the sandbox
    /// time: verifiers check a chain at the payload's `signedDate`, which is sandbox time, and
    /// OCSP at the real time.
    private func newCertificatesStart() -> Date {
        min(realClock(), clock.now()).addingTimeInterval(-86_400)
    }

    private func install(_ authority: SandboxCertificateAuthority) throws(SandboxError) {
        if let authorityDirectory {
            do { try authority.write(to: authorityDirectory) } catch {
                throw SandboxError(
                    .stateUnavailable, "cannot save the certificate authority in \(authorityDirectory.path): \(error)")
            }
        }
        certificates.withLock { $0.signer = $0.signer.replacingAuthority(authority) }
    }

    /// Whether the OCSP responder answers; when it does not, `/ocsp` answers 503, as an
    /// unreachable responder would look to a verifier. In memory only: a restart turns it back on.
    public nonisolated var isOCSPResponderAvailable: Bool {
        certificates.withLock { $0.responderAvailable }
    }

    /// Turns the OCSP responder on or off.
    public nonisolated func setOCSPResponderAvailable(_ available: Bool) {
        certificates.withLock { $0.responderAvailable = available }
    }

    /// The DER OCSP response to a DER OCSP request, at the real time now (see
    /// AppStoreTesting's `SandboxOCSPResponder`).
    public nonisolated func ocspResponse(to request: [UInt8]) -> [UInt8] {
        authority.responder(validity: ocspValidity).response(to: request, at: realClock())
    }
}

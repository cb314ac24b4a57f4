import AppStoreSecurity
import AppStoreTesting
import Foundation
import Hummingbird

/// The certificate authority over HTTP: the OCSP responder named in the certificates
/// (`/ocsp`), and control routes to look at the certificates and revoke them.
extension SandboxService {
    /// `POST /v1/control/ca/revoke`: `{"certificate": "leaf"}` or `{"certificate": "intermediate"}`.
    struct RevokeCertificateBody: Codable, Sendable {
        var certificate: String
    }

    /// `POST /v1/control/ca/responder`: `{"available": false}` makes `/ocsp` answer 503.
    struct ResponderBody: Codable, Sendable {
        var available: Bool
    }

    /// `GET /v1/control/ca`.
    struct CertificatesResponse: Codable, Sendable {
        /// The OCSP URL new certificates name.
        var ocspURL: String?
        var responderAvailable: Bool
        /// Root, intermediate and leaf in use.
        var current: [SandboxCertificateAuthority.CertificateDescription]
        /// Every certificate revoked so far, newest first.
        var revoked: [SandboxCertificateAuthority.CertificateDescription]
    }

    /// `POST /v1/control/ca/revoke`.
    struct RevocationResponse: Codable, Sendable {
        /// What this call revoked: the leaf, or the intermediate and its leaf.
        var revoked: [SandboxCertificateAuthority.CertificateDescription]
        /// Root, intermediate and leaf in use from now on.
        var current: [SandboxCertificateAuthority.CertificateDescription]
    }

    /// The largest OCSP request read; real ones are a few hundred bytes.
    static let ocspRequestLimit = 64 * 1024

    func addOCSPRoutes(to router: Router<SandboxRequestContext>) {
        // RFC 6960 appendix A.1: the DER request as the body of a POST…
        router.post("ocsp") { request, _ in
            guard engine.isOCSPResponderAvailable else { return Self.responderUnavailable() }
            guard let body = try? await request.body.collect(upTo: Self.ocspRequestLimit) else {
                return Self.ocspResponse(OCSPResponseMessage.unsuccessful(.malformedRequest))
            }
            return Self.ocspResponse(engine.ocspResponse(to: Array(buffer: body)))
        }
        // …or base64, then URL-encoded, after the responder's path in a GET.
        router.get("ocsp/**") { request, _ in
            guard engine.isOCSPResponderAvailable else { return Self.responderUnavailable() }
            guard let der = Self.getRequestBytes(path: request.uri.path) else {
                return Self.ocspResponse(OCSPResponseMessage.unsuccessful(.malformedRequest))
            }
            return Self.ocspResponse(engine.ocspResponse(to: der))
        }
    }

    func addCertificateControlRoutes(to control: RouterGroup<SandboxRequestContext>) {
        control.get("ca") { _, _ in
            let authority = engine.authority
            return ServiceJSON.response(
                CertificatesResponse(
                    ocspURL: authority.ocspURL, responderAvailable: engine.isOCSPResponderAvailable,
                    current: authority.currentCertificates, revoked: authority.revokedCertificateDescriptions))
        }
        control.post("ca/revoke") { request, _ in
            await respond {
                let body = try await ServiceJSON.decode(RevokeCertificateBody.self, from: request)
                guard let kind = SandboxCertificateAuthority.CertificateKind(rawValue: body.certificate) else {
                    throw SandboxError(
                        .invalidRequest,
                        "certificate must be \"leaf\" or \"intermediate\" (the root is never revoked), not \"\(body.certificate)\""
                    )
                }
                let rotated = try await engine.revokeCertificate(kind)
                // Newest first: the leaf, then (when the intermediate went) the intermediate.
                let revoked = Array(rotated.revokedCertificateDescriptions.prefix(kind == .leaf ? 1 : 2))
                return ServiceJSON.response(RevocationResponse(revoked: revoked, current: rotated.currentCertificates))
            }
        }
        control.post("ca/responder") { request, _ in
            await respond {
                let body = try await ServiceJSON.decode(ResponderBody.self, from: request)
                engine.setOCSPResponderAvailable(body.available)
                let authority = engine.authority
                return ServiceJSON.response(
                    CertificatesResponse(
                        ocspURL: authority.ocspURL, responderAvailable: body.available,
                        current: authority.currentCertificates, revoked: authority.revokedCertificateDescriptions))
            }
        }
    }

    static func ocspResponse(_ der: [UInt8]) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/ocsp-response"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: der)))
    }

    /// What a verifier sees of a responder that is down.
    static func responderUnavailable() -> Response {
        Response(
            status: .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: "the OCSP responder is switched off\n")))
    }

    /// The DER request of a GET: the path after `/ocsp/`, percent-decoded, then base64 (the
    /// URL-safe alphabet and missing padding are accepted too).
    static func getRequestBytes(path: String) -> [UInt8]? {
        guard let range = path.range(of: "/ocsp/") else { return nil }
        let encoded = path[range.upperBound...]
        guard var text = String(encoded).removingPercentEncoding, !text.isEmpty else { return nil }
        text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        return Data(base64Encoded: text).map { Array($0) }
    }
}

import AppStoreSecurity
public import Foundation
import X509

extension SandboxCertificateAuthority {
    /// One certificate of the authority, in words and numbers: what a control API or a page shows.
    public struct CertificateDescription: Codable, Hashable, Sendable {
        /// `root`, `intermediate` or `leaf`.
        public var kind: String
        /// The serial number, in lowercase hexadecimal without separators.
        public var serialNumber: String
        /// The subject's distinguished name, as RFC 4514 writes it (`CN=…,OU=…,O=…,C=US`).
        public var subject: String
        /// The start of validity.
        public var notValidBefore: Date
        /// The end of validity.
        public var notValidAfter: Date
        /// The OCSP responder the certificate names, if any.
        public var ocspURL: String?
        /// `good` or `revoked`, as the OCSP responder answers for it (the root: always `good`).
        public var status: String
        /// When it was revoked.
        public var revocationDate: Date?

        enum CodingKeys: String, CodingKey {
            case kind, serialNumber, subject, notValidBefore, notValidAfter, ocspURL, status, revocationDate
        }

        init(kind: String, certificate: Certificate, revocationDate: Date? = nil) {
            self.kind = kind
            serialNumber = Self.hex(certificate.serialNumber)
            subject = String(describing: certificate.subject)
            notValidBefore = certificate.notValidBefore
            notValidAfter = certificate.notValidAfter
            ocspURL = SandboxCertificateAuthority.ocspResponderURL(of: certificate)
            status = revocationDate == nil ? "good" : "revoked"
            self.revocationDate = revocationDate
        }

        static func hex(_ serial: Certificate.SerialNumber) -> String {
            serial.bytes.map { String(format: "%02x", $0) }.joined()
        }
    }

    /// The root, the intermediate and the leaf in use, in that order.
    public var currentCertificates: [CertificateDescription] {
        [
            CertificateDescription(kind: "root", certificate: root),
            CertificateDescription(kind: "intermediate", certificate: intermediate),
            CertificateDescription(kind: "leaf", certificate: leaf),
        ]
    }

    /// The certificates revoked so far, newest first.
    public var revokedCertificateDescriptions: [CertificateDescription] {
        revokedCertificates.reversed().map {
            CertificateDescription(
                kind: $0.kind.rawValue, certificate: $0.certificate, revocationDate: $0.revocationDate)
        }
    }
}

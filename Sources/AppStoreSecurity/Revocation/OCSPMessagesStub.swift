public import Foundation
public import X509

// Placeholder until the OCSP message models land.
public struct OCSPCertificateID: Hashable, Sendable {
    public func identifies(_ certificate: Certificate, issuedBy issuer: Certificate) -> Bool { false }
}
public enum OCSPCertificateStatus: Hashable, Sendable { case good, revoked(at: Date), unknown }
public struct OCSPSingleAnswer: Hashable, Sendable {
    public var certificateID: OCSPCertificateID
    public var status: OCSPCertificateStatus
    public var thisUpdate: Date
    public var nextUpdate: Date?
}
public struct OCSPResponseMessage: Sendable {
    public var answers: [OCSPSingleAnswer] = []
    public init(derEncoded: [UInt8]) throws(AppStoreSecurityError) { throw AppStoreSecurityError(.malformedInput) }
}

public import SwiftASN1

extension ASN1ObjectIdentifier {
    /// Apple's marker extensions: their presence, not their value, says what a certificate is for.
    public enum AppleMarker {
        /// 1.2.840.113635.100.6.11.1: on the leaf that signs App Store receipts and JWS.
        public static let receiptSigner: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
        /// 1.2.840.113635.100.6.2.1: on the Apple Worldwide Developer Relations intermediate.
        public static let wwdrIntermediate: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    }
}

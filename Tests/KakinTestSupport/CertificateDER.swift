import X509

extension Certificate {
    /// The DER bytes of a certificate the tests made or parsed themselves.
    public var derBytes: [UInt8] { try! derEncoded() }
}

public import AppStoreSecurity
import Foundation
import KakinLedger
import KakinWire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionOCSPTransport {
    /// The server's OCSP transport: `URLSession` through `cancellableData(for:)`, so that a
    /// revocation check whose request is cancelled (its client went away) cannot hang the server
    /// on Linux.
    public static let cancellable = URLSessionOCSPTransport(send: {
        try await URLSession.shared.cancellableData(for: $0)
    })
}

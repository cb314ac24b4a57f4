import AppStoreModels
import AppStoreSecurity
import Dispatch
import Foundation
import Synchronization

/// Feeds any bytes to the compact JWS parser, the payload decoders behind it and the verifier
/// (header, base64, certificate parsing, chain and signature checks). Throwing is the expected
/// answer to bad input; any crash or memory error is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWS(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let jws = try? CompactJWS(text) else { return 0 }
    _ = jws.signingInput
    _ = try? jws.header()
    _ = try? jws.signatureData()
    _ = try? jws.decodePayload(as: JWSRenewalInfoDecodedPayload.self)
    _ = try? jws.decodePayload(as: ResponseBodyV2DecodedPayload.self)
    _ = try? jws.decodePayload(as: AppTransaction.self)
    // A new verifier each time, so that no chain cache carries state from one input to the next.
    let verifier = JWSVerifier(trustsXcodeSigning: true, now: { Date(timeIntervalSince1970: 1_700_000_000) })
    let verified = waitFor { try? await verifier.verify(text, as: JWSTransactionDecodedPayload.self) }
    if let verified {
        _ = verified.payload.priceAmount
        _ = verified.payload.offerPeriodValue
    }
    return 0
}

/// Runs an async verification to its end from libFuzzer's synchronous entry point.
func waitFor<Result: Sendable>(_ body: @escaping @Sendable () async -> Result) -> Result {
    let box = Mutex<Result?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let result = await body()
        box.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return box.withLock { $0! }
}

import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A raw TCP connection to a server on 127.0.0.1, for what an HTTP client cannot do: send a
/// request in pieces, stall, read a response that never ends as it arrives, or see the server
/// close the connection. Every read is bounded by the receive timeout, so a server that does not
/// answer fails the test instead of hanging it; blocking reads never run on the concurrency pool
/// (``next(until:)`` reads on a thread of its own). The socket is closed when the connection is
/// released.
public final class RawConnection: Sendable {
    /// Why the connection could not be made or used.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    private let socket: Int32
    /// Bytes received that ``receive(until:)`` has not handed out yet start at `consumed`.
    private let received = Mutex<[UInt8]>([])
    private let consumed = Mutex(0)

    /// Connects to 127.0.0.1:`port`; each read waits at most `receiveTimeout` seconds.
    public init(port: Int, receiveTimeout: Int = 20) throws {
        #if canImport(Glibc)
        let handle = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let handle = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard handle >= 0 else { throw Failure(description: "socket() failed") }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(handle, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(handle, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(handle)
            throw Failure(description: "cannot connect to port \(port)")
        }
        socket = handle
    }

    deinit { close(socket) }

    /// Sends `text` as it is.
    public func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard sendBytes(socket, bytes) == bytes.count else { throw Failure(description: "cannot send \(text)") }
    }

    /// Everything the server sends until it closes the connection or stops for the receive timeout.
    public func receiveAll() -> String {
        var all = received.withLock { bytes in consumed.withLock { Array(bytes[$0...]) } }
        while let chunk = receiveChunk() { all += chunk }
        return String(decoding: all, as: UTF8.self)
    }

    /// Whether the server closes the connection (a read meets its end) before the receive timeout.
    public func isClosedByServer() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 1024)
        return receiveBytes(socket, &buffer) == 0
    }

    /// The text received after what earlier calls handed out, up to and including the first
    /// occurrence of `marker`; reads (blocking) until it arrives.
    public func receive(until marker: String) throws -> String {
        let pattern = Array(marker.utf8)
        while true {
            let bytes = received.withLock { $0 }
            let start = consumed.withLock { $0 }
            if bytes.count - start >= pattern.count {
                for index in start...(bytes.count - pattern.count)
                where bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
                    let end = index + pattern.count
                    consumed.withLock { $0 = end }
                    return String(decoding: bytes[start..<end], as: UTF8.self)
                }
            }
            guard let chunk = receiveChunk() else {
                throw Failure(
                    description: "the connection ended or timed out before \(marker): "
                        + String(decoding: bytes[start...], as: UTF8.self))
            }
            received.withLock { $0.append(contentsOf: chunk) }
        }
    }

    /// ``receive(until:)`` on a thread of its own, so the wait holds no thread of the concurrency pool.
    public func next(until marker: String) async throws -> String {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
            let thread = Thread { continuation.resume(with: Result { try self.receive(until: marker) }) }
            thread.start()
        }
    }

    /// One read: `nil` when the server closed the connection or the receive timeout passed.
    private func receiveChunk() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = receiveBytes(socket, &buffer)
        return count > 0 ? Array(buffer[0..<count]) : nil
    }
}

/// A loopback port free right now (bound, read and released).
public func freePort() throws -> Int {
    #if canImport(Glibc)
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
    #endif
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
        }
    }
    guard bound else { throw RawConnection.Failure(description: "no free port on 127.0.0.1") }
    return Int(UInt16(bigEndian: address.sin_port))
}

private func sendBytes(_ socket: Int32, _ bytes: [UInt8]) -> Int {
    bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
}

private func receiveBytes(_ socket: Int32, _ buffer: inout [UInt8]) -> Int {
    buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
}

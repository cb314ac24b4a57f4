import ArgumentParser
import Foundation
import Hummingbird
import KakinServer
import Logging

/// `kakin server --config FILE`: the purchase server alone, in front of the real App Store.
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Run the purchase server alone, in front of the real App Store (no sandbox).",
        discussion: """
            FILE is JSON with the keys listen {host, port}, database (sqlite:PATH or \
            postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE), postgres {maxConnections, connectionWaitSeconds, writers, tls, caFile, schema}, \
            serverKey (PEM path, \
            made on first start), keys {publishable, secret}, webhooks [{url, secret}], apps [{bundleId, \
            appAppleId, environments, sharedSecret, appStoreServerAPI {keyId, issuerId, privateKey}, catalog, \
            grants, transferPolicy, extraRoots, endpoints, keys}], clawbackPolicy, logging {format, level}, \
            limits {maxBodyBytes, maxContentBytes, idleTimeoutSeconds} and jobs {webhookIntervalSeconds, \
            webhookLeaseSeconds, reconcileIntervalSeconds}. Several servers may share one PostgreSQL database. Any value may be env:NAME to read it from the environment. Relative \
            paths are taken from the file's directory. Unknown keys stop the start.
            """)

    @Option(help: "The JSON configuration file (env KAKIN_CONFIG).") var config: String?

    func run() async throws {
        guard let path = config ?? ProcessInfo.processInfo.environment["KAKIN_CONFIG"] else {
            ServiceRunner.fail("kakin server needs --config FILE")
        }
        let configuration: ServerConfiguration
        do { configuration = try ServerConfiguration.load(contentsOf: URL(fileURLWithPath: path)) } catch {
            ServiceRunner.fail(error.message)
        }
        ServiceRunner.bootstrapLogging(format: configuration.logFormat, level: configuration.logLevel)
        let listen = configuration.listen
        var dependencies = ServerDependencies()
        let apps = configuration.apps.map(\.bundleID).joined(separator: ", ")
        dependencies.onServerRunning = { port in
            let banner = """
                Kakin purchase server on http://\(listen.host):\(port)
                  apps:          \(apps)
                  notifications: http://\(listen.host):\(port)/v1/notifications/apple
                  metrics:       http://\(listen.host):\(port)/metrics

                """
            FileHandle.standardOutput.write(Data(banner.utf8))
        }
        let application: any ApplicationProtocol
        do { application = try await buildApplication(configuration: configuration, dependencies: dependencies) } catch
        {
            ServiceRunner.fail(ServerError(error).message)
        }
        try await ServiceRunner.run(
            [application], logger: Logger(label: "kakin.server"), addresses: ["\(listen.host):\(listen.port)"])
    }
}

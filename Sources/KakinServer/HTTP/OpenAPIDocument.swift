/// The server's API description, served at `/openapi.yaml`.
///
/// It lists every status each route can answer; `scripts/schemathesis` checks the running server
/// against it (statuses, content types, bodies and headers).
enum OpenAPIDocument {
    static let yaml = """
        openapi: 3.1.0
        info:
          title: Kakin purchase server
          version: "1"
          description: >-
            Verify App Store purchases, record them once, grant once.
            Keyed routes check the key (headers only) before anything else, so a caller without a valid
            key learns nothing about which apps the server has.
            Every failure answers the Error body with the status of its code (400 invalidRequest,
            401 unauthorized, 403 notEntitled, 404 unknownApp/notFound/notConfigured,
            405 methodNotAllowed, 409 conflict, 413 payloadTooLarge, 429 tooManyAttempts with Retry-After,
            422 verificationFailed/receiptRejected/insufficientBalance,
            503 appleUnavailable/storageUnavailable with Retry-After, 500 internalError/invalidConfiguration).
            A path below asked with another of GET, POST, PUT, DELETE or PATCH answers 405 with the
            Error body and an Allow header naming the methods the path takes (the MethodNotAllowed response).
            Every answer of a route carries X-Request-Id. Dates are integers: milliseconds since 1970.
        components:
          securitySchemes:
            appKey:
              type: apiKey
              in: header
              name: X-Kakin-Key
              description: The app's publishable key (pk_…). Checked before Authorization when both are sent.
            bearerKey:
              type: http
              scheme: bearer
              description: >-
                Authorization: Bearer with the app's secret key (sk_…), which works on every keyed route.
                Spending, content upload and reconciliation take the secret key only; the other keyed
                routes also take Bearer pk_….
          headers:
            RequestId:
              description: The request's ID, also in the server's log line for it.
              required: true
              schema: {type: string, minLength: 1}
            Signature:
              description: >-
                Base64 of the ES256 signature (raw R and S, 64 bytes) over the exact body bytes, made with
                the server key published at /v1/server-key.
              required: true
              schema: {type: string, minLength: 1}
            RetryAfter:
              description: Seconds to wait before retrying.
              required: true
              schema: {type: string, pattern: "^[0-9]+$"}
            Allow:
              description: The methods the path takes, comma-separated.
              required: true
              schema: {type: string, minLength: 1}
            ETag:
              description: The SHA-256 of the whole package in lowercase hex, quoted.
              required: true
              schema: {type: string}
            AcceptRanges:
              required: true
              schema: {type: string, const: bytes}
            ContentVersion:
              description: The version of the package served (the newest uploaded).
              required: true
              schema: {type: string}
            ContentSHA256:
              description: The SHA-256 of the whole package in lowercase hex.
              required: true
              schema: {type: string}
          schemas:
            EpochMilliseconds:
              type: integer
              description: Milliseconds since 1970-01-01T00:00:00Z.
            Error:
              type: object
              required: [error]
              additionalProperties: false
              properties:
                error:
                  type: object
                  required: [code, message, retryable]
                  additionalProperties: false
                  properties:
                    code:
                      type: string
                      enum: [invalidRequest, unauthorized, notEntitled, unknownApp, notFound, notConfigured,
                        methodNotAllowed, conflict, payloadTooLarge, verificationFailed, receiptRejected,
                        insufficientBalance, appleUnavailable, storageUnavailable, internalError, invalidConfiguration,
                        tooManyAttempts]
                    message: {type: string}
                    retryable:
                      type: boolean
                      description: True only for appleUnavailable, storageUnavailable and tooManyAttempts.
                    cause:
                      type: string
                      description: >-
                        Verification failures: the verifier's code (badSignature, untrustedChain, certificateExpired,
                        certificateRevoked, wrongBundleID, wrongEnvironment, malformedInput, …); with appleUnavailable,
                        revocationUnavailable (no usable OCSP answer while revocation is required) or
                        certificateExpired (a late transaction that could not be fetched again). Conflicts and storage failures: the
                        storage code (ownedByAnotherCustomer, idempotencyKeyReused, contentVersionConflict, unavailable, …).
                    appleStatus:
                      type: integer
                      description: For receiptRejected and appleUnavailable from verifyReceipt, Apple's status code.
            Entitlement:
              type: object
              required: [identifier, productId, isActive, transactionId, originalTransactionId]
              additionalProperties: false
              properties:
                identifier: {type: string}
                productId: {type: string}
                isActive: {type: boolean}
                expiresDate: {$ref: "#/components/schemas/EpochMilliseconds"}
                revocationDate: {$ref: "#/components/schemas/EpochMilliseconds"}
                transactionId: {type: string}
                originalTransactionId: {type: string}
            Transaction:
              type: object
              required: [transactionId, originalTransactionId, productId, productType, quantity, purchaseDate,
                environment, source]
              additionalProperties: false
              properties:
                transactionId: {type: string}
                originalTransactionId: {type: string}
                productId: {type: string}
                productType:
                  type: string
                  description: Auto-Renewable Subscription, Non-Consumable, Consumable or Non-Renewing Subscription.
                quantity: {type: integer}
                purchaseDate: {$ref: "#/components/schemas/EpochMilliseconds"}
                expiresDate: {$ref: "#/components/schemas/EpochMilliseconds"}
                revocationDate: {$ref: "#/components/schemas/EpochMilliseconds"}
                revocationReason: {type: integer, description: 0 (other) or 1 (an issue in the app).}
                environment: {type: string, description: "Production, Sandbox, Xcode or LocalTesting."}
                source:
                  type: string
                  enum: [app, notification, reconciliation, receipt]
                  description: How the server learned of the transaction.
                signedTransaction:
                  type: string
                  description: The JWS the transaction was verified from; only with include=signedTransaction.
            Customer:
              type: object
              required: [bundleId, appUserId, entitlements, balances, transactions, transactionCount]
              additionalProperties: false
              properties:
                bundleId: {type: string}
                appUserId: {type: string}
                entitlements: {type: array, items: {$ref: "#/components/schemas/Entitlement"}}
                balances:
                  type: object
                  description: Currency balances by currency name.
                  additionalProperties: {type: integer}
                transactions:
                  type: array
                  description: The newest transactions, newest first (see the transactions parameter).
                  items: {$ref: "#/components/schemas/Transaction"}
                transactionCount: {type: integer, minimum: 0, description: How many transactions the customer has in all.}
            SignedCustomerAnswer:
              type: object
              description: Signed with the server key; the signature is in the X-Kakin-Signature header.
              required: [signedDate, customer]
              additionalProperties: false
              properties:
                nonce: {type: string, description: The request's nonce when it sent one.}
                signedDate: {$ref: "#/components/schemas/EpochMilliseconds"}
                customer: {$ref: "#/components/schemas/Customer"}
            TransactionPage:
              type: object
              description: Signed with the server key; the signature is in the X-Kakin-Signature header.
              required: [signedDate, bundleId, appUserId, transactions]
              additionalProperties: false
              properties:
                nonce: {type: string, description: The request's nonce when it sent one.}
                signedDate: {$ref: "#/components/schemas/EpochMilliseconds"}
                bundleId: {type: string}
                appUserId: {type: string}
                transactions:
                  type: array
                  description: Newest first.
                  items: {$ref: "#/components/schemas/Transaction"}
                nextCursor: {type: string, description: Pass as cursor for the next page; absent on the last page.}
            SpendResult:
              type: object
              required: [status, balance]
              additionalProperties: false
              properties:
                status:
                  type: string
                  enum: [spent, alreadySpent]
                  description: alreadySpent when the idempotency key was spent before (nothing spent again).
                balance: {type: integer, description: The balance after spending.}
            NotificationResult:
              type: object
              required: [status]
              additionalProperties: false
              properties:
                status: {type: string, enum: [processed, duplicate]}
                notificationType: {type: string}
            ContentUpload:
              type: object
              required: [productId, version, sha256, size]
              additionalProperties: false
              properties:
                productId: {type: string}
                version: {type: string}
                sha256: {type: string, pattern: "^[0-9a-f]{64}$"}
                size: {type: integer, minimum: 0}
            Catalog:
              type: object
              required: [bundleId, locale, products]
              additionalProperties: false
              properties:
                bundleId: {type: string}
                locale: {type: string}
                products:
                  type: array
                  items:
                    type: object
                    required: [productId, type, grants]
                    additionalProperties: false
                    properties:
                      productId: {type: string}
                      type: {type: string}
                      referenceName: {type: string}
                      displayName: {type: string}
                      description: {type: string}
                      displayPrice: {type: string}
                      subscriptionGroupId: {type: string}
                      subscriptionPeriod: {type: string}
                      grants:
                        type: array
                        items:
                          type: object
                          additionalProperties: false
                          properties:
                            entitlement: {type: string}
                            currency: {type: string}
                            amount: {type: integer}
                            content: {type: boolean}
            ReconcileReport:
              type: object
              required: [customersExamined, transactionsSeen, transactionsRecorded, transactionsRevoked]
              additionalProperties: false
              properties:
                customersExamined: {type: integer, minimum: 0}
                transactionsSeen: {type: integer, minimum: 0}
                transactionsRecorded: {type: integer, minimum: 0}
                transactionsRevoked: {type: integer, minimum: 0}
          parameters:
            bundleId:
              name: bundleId
              in: query
              required: true
              description: The app's bundle ID; 404 unknownApp when no app has it.
              schema: {type: string, minLength: 1, examples: [com.example.kakin]}
            appUserIdPath:
              name: appUserId
              in: path
              required: true
              description: The customer, percent-encoded; 1 to 256 characters without line breaks.
              schema: {type: string, minLength: 1, maxLength: 256}
            nonce:
              name: nonce
              in: query
              description: Echoed in the signed answer so the client can tell a replayed answer.
              schema: {type: string}
            include:
              name: include
              in: query
              description: Comma-separated extras; signedTransaction adds each transaction's JWS.
              schema: {type: string, examples: [signedTransaction]}
            transactions:
              name: transactions
              in: query
              description: How many of the newest transactions the answer carries (the rest through /transactions).
              schema: {type: integer, minimum: 0, maximum: 100, default: 10}
          responses:
            BadRequest:
              description: invalidRequest (a malformed body, a missing or out-of-range parameter).
              headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
              content:
                application/json:
                  schema:
                    allOf:
                      - $ref: "#/components/schemas/Error"
                      - properties: {error: {properties: {code: {const: invalidRequest}, retryable: {const: false}}}}
            Unauthorized:
              description: unauthorized (a missing or wrong key, or a key of another app).
              headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
              content:
                application/json:
                  schema:
                    allOf:
                      - $ref: "#/components/schemas/Error"
                      - properties: {error: {properties: {code: {const: unauthorized}, retryable: {const: false}}}}
            TooManyAttempts:
              description: >-
                tooManyAttempts (the request's address sent too many wrong keys; until Retry-After has
                passed, a request presenting more than the app's publishable key is refused unchecked).
              headers:
                Retry-After: {$ref: "#/components/headers/RetryAfter"}
                X-Request-Id: {$ref: "#/components/headers/RequestId"}
              content:
                application/json:
                  schema:
                    allOf:
                      - $ref: "#/components/schemas/Error"
                      - properties: {error: {properties: {code: {const: tooManyAttempts}, retryable: {const: true}}}}
            UnknownApp:
              description: unknownApp (no app is configured with the bundle ID).
              headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
              content:
                application/json:
                  schema:
                    allOf:
                      - $ref: "#/components/schemas/Error"
                      - properties: {error: {properties: {code: {const: unknownApp}, retryable: {const: false}}}}
            ContentNotFound:
              description: >-
                unknownApp, or notFound (no such product in the app's catalog, it grants no content, or no
                package was uploaded).
              headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
              content:
                application/json:
                  schema:
                    allOf:
                      - $ref: "#/components/schemas/Error"
                      - properties: {error: {properties: {code: {enum: [unknownApp, notFound]}, retryable: {const: false}}}}
            MethodNotAllowed:
              description: methodNotAllowed (the path exists, not with this method).
              headers:
                Allow: {$ref: "#/components/headers/Allow"}
                X-Request-Id: {$ref: "#/components/headers/RequestId"}
              content:
                application/json:
                  schema:
                    allOf:
                      - $ref: "#/components/schemas/Error"
                      - properties: {error: {properties: {code: {const: methodNotAllowed}, retryable: {const: false}}}}
            Conflict:
              description: >-
                conflict (the transaction belongs to another customer, an idempotency key reused for another
                spend, or a content version uploaded before with other bytes).
              headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
              content:
                application/json:
                  schema:
                    allOf:
                      - $ref: "#/components/schemas/Error"
                      - properties: {error: {properties: {code: {const: conflict}, retryable: {const: false}}}}
            PayloadTooLarge:
              description: payloadTooLarge (the body is larger than the server accepts).
              headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
              content:
                application/json:
                  schema:
                    allOf:
                      - $ref: "#/components/schemas/Error"
                      - properties: {error: {properties: {code: {const: payloadTooLarge}, retryable: {const: false}}}}
            VerificationFailed:
              description: verificationFailed (signature, chain, bundle ID or environment); error.cause says which.
              headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
              content:
                application/json:
                  schema:
                    allOf:
                      - $ref: "#/components/schemas/Error"
                      - properties: {error: {properties: {code: {const: verificationFailed}, retryable: {const: false}}}}
            Unavailable:
              description: >-
                appleUnavailable (Apple could not be reached or asked to retry: verifyReceipt, the App Store
                Server API, or the OCSP responder of a signing certificate when revocation is required) or
                storageUnavailable (the database could not be reached); retry later.
              headers:
                Retry-After: {$ref: "#/components/headers/RetryAfter"}
                X-Request-Id: {$ref: "#/components/headers/RequestId"}
              content:
                application/json:
                  schema:
                    allOf:
                      - $ref: "#/components/schemas/Error"
                      - properties:
                          error: {properties: {code: {enum: [appleUnavailable, storageUnavailable]}, retryable: {const: true}}}
            InternalError:
              description: internalError (a defect of the server) or invalidConfiguration; never retried blindly.
              headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
              content:
                application/json:
                  schema:
                    allOf:
                      - $ref: "#/components/schemas/Error"
                      - properties:
                          error: {properties: {code: {enum: [internalError, invalidConfiguration]}, retryable: {const: false}}}
            CustomerAnswer:
              description: The customer, signed.
              headers:
                X-Kakin-Signature: {$ref: "#/components/headers/Signature"}
                X-Request-Id: {$ref: "#/components/headers/RequestId"}
              content:
                application/json:
                  schema: {$ref: "#/components/schemas/SignedCustomerAnswer"}
        paths:
          /v1/transactions:
            description: "Asked with another of GET, POST, PUT, DELETE and PATCH: 405 (MethodNotAllowed) with Allow: POST."
            post:
              summary: Verify and record a signed transaction (StoreKit 2 JWS or the sandbox's) for a customer.
              security: [{appKey: []}, {bearerKey: []}]
              parameters:
                - $ref: "#/components/parameters/nonce"
                - $ref: "#/components/parameters/transactions"
                - $ref: "#/components/parameters/include"
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [bundleId, appUserId, signedTransaction]
                      properties:
                        bundleId: {type: string, examples: [com.example.kakin]}
                        appUserId: {type: string, minLength: 1, maxLength: 256}
                        signedTransaction: {type: string}
              responses:
                "200": {$ref: "#/components/responses/CustomerAnswer"}
                "400": {$ref: "#/components/responses/BadRequest"}
                "401": {$ref: "#/components/responses/Unauthorized"}
                "429": {$ref: "#/components/responses/TooManyAttempts"}
                "404": {$ref: "#/components/responses/ContentNotFound"}
                "409": {$ref: "#/components/responses/Conflict"}
                "413": {$ref: "#/components/responses/PayloadTooLarge"}
                "422": {$ref: "#/components/responses/VerificationFailed"}
                "500": {$ref: "#/components/responses/InternalError"}
                "503": {$ref: "#/components/responses/Unavailable"}
          /v1/receipts:
            description: "Asked with another of GET, POST, PUT, DELETE and PATCH: 405 (MethodNotAllowed) with Allow: POST."
            post:
              summary: >-
                Verify a base64 app receipt with verifyReceipt (production first, sandbox on 21007) and record
                its purchases for the customer.
              security: [{appKey: []}, {bearerKey: []}]
              parameters:
                - $ref: "#/components/parameters/nonce"
                - $ref: "#/components/parameters/transactions"
                - $ref: "#/components/parameters/include"
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [bundleId, appUserId, receipt]
                      properties:
                        bundleId: {type: string, examples: [com.example.kakin]}
                        appUserId: {type: string, minLength: 1, maxLength: 256}
                        receipt: {type: string, minLength: 1, description: The base64 app receipt.}
                        transactionId: {type: string}
              responses:
                "200": {$ref: "#/components/responses/CustomerAnswer"}
                "400": {$ref: "#/components/responses/BadRequest"}
                "401": {$ref: "#/components/responses/Unauthorized"}
                "429": {$ref: "#/components/responses/TooManyAttempts"}
                "404": {$ref: "#/components/responses/ContentNotFound"}
                "409": {$ref: "#/components/responses/Conflict"}
                "413": {$ref: "#/components/responses/PayloadTooLarge"}
                "422":
                  description: >-
                    receiptRejected (Apple refused the receipt; error.appleStatus holds its status code) or
                    verificationFailed (the receipt is for another app or environment).
                  headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
                  content:
                    application/json:
                      schema:
                        allOf:
                          - $ref: "#/components/schemas/Error"
                          - properties:
                              error: {properties: {code: {enum: [receiptRejected, verificationFailed]}, retryable: {const: false}}}
                "500": {$ref: "#/components/responses/InternalError"}
                "503": {$ref: "#/components/responses/Unavailable"}
          /v1/notifications/apple:
            description: "Asked with another of GET, POST, PUT, DELETE and PATCH: 405 (MethodNotAllowed) with Allow: POST."
            post:
              summary: >-
                App Store Server Notifications V2, without a key (the signature is the authentication);
                answers 200 only after the notification is durably recorded.
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [signedPayload]
                      properties: {signedPayload: {type: string, minLength: 1}}
              responses:
                "200":
                  description: Processed, or a duplicate of one already processed.
                  headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
                  content: {application/json: {schema: {$ref: "#/components/schemas/NotificationResult"}}}
                "400": {$ref: "#/components/responses/BadRequest"}
                "404": {$ref: "#/components/responses/UnknownApp"}
                "413": {$ref: "#/components/responses/PayloadTooLarge"}
                "422": {$ref: "#/components/responses/VerificationFailed"}
                "500": {$ref: "#/components/responses/InternalError"}
                "503": {$ref: "#/components/responses/Unavailable"}
          /v1/customers/{appUserId}:
            description: "Asked with another of GET, POST, PUT, DELETE and PATCH: 405 (MethodNotAllowed) with Allow: GET."
            get:
              summary: Entitlements, balances and the newest transactions, signed over the client's nonce.
              security: [{appKey: []}, {bearerKey: []}]
              parameters:
                - $ref: "#/components/parameters/appUserIdPath"
                - $ref: "#/components/parameters/bundleId"
                - $ref: "#/components/parameters/nonce"
                - $ref: "#/components/parameters/transactions"
                - $ref: "#/components/parameters/include"
              responses:
                "200": {$ref: "#/components/responses/CustomerAnswer"}
                "400": {$ref: "#/components/responses/BadRequest"}
                "401": {$ref: "#/components/responses/Unauthorized"}
                "429": {$ref: "#/components/responses/TooManyAttempts"}
                "404": {$ref: "#/components/responses/UnknownApp"}
                "500": {$ref: "#/components/responses/InternalError"}
                "503": {$ref: "#/components/responses/Unavailable"}
          /v1/customers/{appUserId}/transactions:
            description: "Asked with another of GET, POST, PUT, DELETE and PATCH: 405 (MethodNotAllowed) with Allow: GET."
            get:
              summary: A page of the customer's transactions, newest first, signed over the client's nonce.
              security: [{appKey: []}, {bearerKey: []}]
              parameters:
                - $ref: "#/components/parameters/appUserIdPath"
                - $ref: "#/components/parameters/bundleId"
                - {name: limit, in: query, description: The page size., schema: {type: integer, minimum: 1, maximum: 100, default: 50}}
                - {name: cursor, in: query, description: The nextCursor of the previous page; 400 for any other value., schema: {type: string, minLength: 1}}
                - $ref: "#/components/parameters/include"
                - $ref: "#/components/parameters/nonce"
              responses:
                "200":
                  description: The page, signed.
                  headers:
                    X-Kakin-Signature: {$ref: "#/components/headers/Signature"}
                    X-Request-Id: {$ref: "#/components/headers/RequestId"}
                  content: {application/json: {schema: {$ref: "#/components/schemas/TransactionPage"}}}
                "400": {$ref: "#/components/responses/BadRequest"}
                "401": {$ref: "#/components/responses/Unauthorized"}
                "429": {$ref: "#/components/responses/TooManyAttempts"}
                "404": {$ref: "#/components/responses/UnknownApp"}
                "500": {$ref: "#/components/responses/InternalError"}
                "503": {$ref: "#/components/responses/Unavailable"}
          /v1/customers/{appUserId}/balances/{currency}/spend:
            description: "Asked with another of GET, POST, PUT, DELETE and PATCH: 405 (MethodNotAllowed) with Allow: POST."
            post:
              summary: Spend currency atomically, once per idempotency key, never below zero (secret key only).
              security: [{bearerKey: []}]
              parameters:
                - $ref: "#/components/parameters/appUserIdPath"
                - {name: currency, in: path, required: true, schema: {type: string, minLength: 1}}
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [bundleId, amount, idempotencyKey]
                      properties:
                        bundleId: {type: string, examples: [com.example.kakin]}
                        amount: {type: integer, minimum: 1, maximum: 9223372036854775807}
                        idempotencyKey: {type: string, minLength: 1, maxLength: 200}
              responses:
                "200":
                  description: Spent now, or spent before with the same idempotency key; the balance after.
                  headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
                  content: {application/json: {schema: {$ref: "#/components/schemas/SpendResult"}}}
                "400": {$ref: "#/components/responses/BadRequest"}
                "401": {$ref: "#/components/responses/Unauthorized"}
                "429": {$ref: "#/components/responses/TooManyAttempts"}
                "404": {$ref: "#/components/responses/ContentNotFound"}
                "409": {$ref: "#/components/responses/Conflict"}
                "413": {$ref: "#/components/responses/PayloadTooLarge"}
                "422":
                  description: insufficientBalance (the balance is less than the amount); nothing spent.
                  headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
                  content:
                    application/json:
                      schema:
                        allOf:
                          - $ref: "#/components/schemas/Error"
                          - properties: {error: {properties: {code: {const: insufficientBalance}, retryable: {const: false}}}}
                "500": {$ref: "#/components/responses/InternalError"}
                "503": {$ref: "#/components/responses/Unavailable"}
          /v1/content/{productId}:
            description: "Asked with another of GET, POST, PUT, DELETE and PATCH: 405 (MethodNotAllowed) with Allow: PUT, GET."
            put:
              summary: >-
                Upload a hosted content package (secret key only); a new version is kept beside the old ones,
                the same version with other bytes is a conflict.
              security: [{bearerKey: []}]
              parameters:
                - {name: productId, in: path, required: true, description: "Letters, digits, _ and . (400 otherwise).", schema: {type: string, minLength: 1, maxLength: 255, pattern: "^[A-Za-z0-9_.]+$"}}
                - $ref: "#/components/parameters/bundleId"
                - {name: version, in: query, required: true, schema: {type: string, minLength: 1, maxLength: 64}}
              requestBody:
                required: true
                description: The package's bytes; an empty package is 400.
                content: {application/octet-stream: {schema: {type: string, format: binary}}}
              responses:
                "201":
                  description: Stored, with its SHA-256.
                  headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
                  content: {application/json: {schema: {$ref: "#/components/schemas/ContentUpload"}}}
                "400": {$ref: "#/components/responses/BadRequest"}
                "401": {$ref: "#/components/responses/Unauthorized"}
                "429": {$ref: "#/components/responses/TooManyAttempts"}
                "404": {$ref: "#/components/responses/ContentNotFound"}
                "409": {$ref: "#/components/responses/Conflict"}
                "413": {$ref: "#/components/responses/PayloadTooLarge"}
                "500": {$ref: "#/components/responses/InternalError"}
                "503": {$ref: "#/components/responses/Unavailable"}
            get:
              summary: >-
                Download the newest package of a product to a customer whose purchase grants its content;
                one Range per request, If-Range and ETag supported.
              security: [{appKey: []}, {bearerKey: []}]
              parameters:
                - {name: productId, in: path, required: true, description: "Letters, digits, _ and . (400 otherwise).", schema: {type: string, minLength: 1, maxLength: 255, pattern: "^[A-Za-z0-9_.]+$"}}
                - $ref: "#/components/parameters/bundleId"
                - {name: appUserId, in: query, required: true, schema: {type: string, minLength: 1, maxLength: 256}}
                - {name: Range, in: header, description: "One range: bytes=FIRST-LAST, bytes=FIRST- or bytes=-SUFFIX.", schema: {type: string, examples: [bytes=0-1023]}}
                - {name: If-Range, in: header, description: An ETag; a stale one gets the whole package., schema: {type: string}}
              responses:
                "200":
                  description: The whole package.
                  headers:
                    ETag: {$ref: "#/components/headers/ETag"}
                    Accept-Ranges: {$ref: "#/components/headers/AcceptRanges"}
                    X-Content-Version: {$ref: "#/components/headers/ContentVersion"}
                    X-Content-SHA256: {$ref: "#/components/headers/ContentSHA256"}
                    X-Request-Id: {$ref: "#/components/headers/RequestId"}
                  content: {application/octet-stream: {schema: {type: string, format: binary}}}
                "206":
                  description: The requested range.
                  headers:
                    Content-Range:
                      required: true
                      schema: {type: string, pattern: "^bytes [0-9]+-[0-9]+/[0-9]+$"}
                    ETag: {$ref: "#/components/headers/ETag"}
                    Accept-Ranges: {$ref: "#/components/headers/AcceptRanges"}
                    X-Content-Version: {$ref: "#/components/headers/ContentVersion"}
                    X-Content-SHA256: {$ref: "#/components/headers/ContentSHA256"}
                    X-Request-Id: {$ref: "#/components/headers/RequestId"}
                  content: {application/octet-stream: {schema: {type: string, format: binary}}}
                "400": {$ref: "#/components/responses/BadRequest"}
                "401": {$ref: "#/components/responses/Unauthorized"}
                "429": {$ref: "#/components/responses/TooManyAttempts"}
                "403":
                  description: notEntitled (the customer has no active purchase of the product).
                  headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
                  content:
                    application/json:
                      schema:
                        allOf:
                          - $ref: "#/components/schemas/Error"
                          - properties: {error: {properties: {code: {const: notEntitled}, retryable: {const: false}}}}
                "404": {$ref: "#/components/responses/ContentNotFound"}
                "416":
                  description: The range is outside the package (or not one bytes= range); no body.
                  headers:
                    Content-Range:
                      required: true
                      schema: {type: string, pattern: "^bytes [*]/[0-9]+$"}
                    ETag: {$ref: "#/components/headers/ETag"}
                    Accept-Ranges: {$ref: "#/components/headers/AcceptRanges"}
                    X-Content-Version: {$ref: "#/components/headers/ContentVersion"}
                    X-Content-SHA256: {$ref: "#/components/headers/ContentSHA256"}
                    X-Request-Id: {$ref: "#/components/headers/RequestId"}
                "500": {$ref: "#/components/responses/InternalError"}
                "503": {$ref: "#/components/responses/Unavailable"}
          /v1/catalog:
            description: "Asked with another of GET, POST, PUT, DELETE and PATCH: 405 (MethodNotAllowed) with Allow: GET."
            get:
              summary: The product list with what each product grants, localized for a locale.
              security: [{appKey: []}, {bearerKey: []}]
              parameters:
                - $ref: "#/components/parameters/bundleId"
                - {name: locale, in: query, description: Defaults to en_US., schema: {type: string, examples: [ja_JP]}}
              responses:
                "200":
                  description: The catalog.
                  headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
                  content: {application/json: {schema: {$ref: "#/components/schemas/Catalog"}}}
                "400": {$ref: "#/components/responses/BadRequest"}
                "401": {$ref: "#/components/responses/Unauthorized"}
                "429": {$ref: "#/components/responses/TooManyAttempts"}
                "404":
                  description: unknownApp, or notConfigured (no catalog is configured for the app).
                  headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
                  content:
                    application/json:
                      schema:
                        allOf:
                          - $ref: "#/components/schemas/Error"
                          - properties: {error: {properties: {code: {enum: [unknownApp, notConfigured]}, retryable: {const: false}}}}
          /v1/admin/reconcile:
            description: "Asked with another of GET, POST, PUT, DELETE and PATCH: 405 (MethodNotAllowed) with Allow: POST."
            post:
              summary: Reconcile the app's customers with the App Store Server API now (secret key only).
              security: [{bearerKey: []}]
              parameters: [{$ref: "#/components/parameters/bundleId"}]
              responses:
                "200":
                  description: What reconciliation saw and changed.
                  headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
                  content: {application/json: {schema: {$ref: "#/components/schemas/ReconcileReport"}}}
                "400": {$ref: "#/components/responses/BadRequest"}
                "401": {$ref: "#/components/responses/Unauthorized"}
                "429": {$ref: "#/components/responses/TooManyAttempts"}
                "404":
                  description: unknownApp, or notConfigured (no App Store Server API key for the app).
                  headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
                  content:
                    application/json:
                      schema:
                        allOf:
                          - $ref: "#/components/schemas/Error"
                          - properties: {error: {properties: {code: {enum: [unknownApp, notConfigured]}, retryable: {const: false}}}}
                "422": {$ref: "#/components/responses/VerificationFailed"}
                "500": {$ref: "#/components/responses/InternalError"}
                "503": {$ref: "#/components/responses/Unavailable"}
          /v1/server-key:
            description: "Asked with another of GET, POST, PUT, DELETE and PATCH: 405 (MethodNotAllowed) with Allow: GET."
            get:
              summary: The server's public key (PEM) that signs customer answers.
              responses:
                "200":
                  description: A P-256 public key.
                  headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
                  content: {application/x-pem-file: {schema: {type: string}}}
          /openapi.yaml:
            description: "Asked with another of GET, POST, PUT, DELETE and PATCH: 405 (MethodNotAllowed) with Allow: GET."
            get:
              summary: This document.
              responses:
                "200":
                  description: OpenAPI 3.1.
                  headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
                  content: {application/yaml: {schema: {type: object, required: [openapi, info, paths]}}}
          /health:
            description: "Asked with another of GET, POST, PUT, DELETE and PATCH: 405 (MethodNotAllowed) with Allow: GET."
            get:
              summary: Liveness; answers without touching the database.
              responses:
                "200":
                  description: ok
                  headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
                  content: {text/plain: {schema: {type: string}}}
          /ready:
            description: "Asked with another of GET, POST, PUT, DELETE and PATCH: 405 (MethodNotAllowed) with Allow: GET."
            get:
              summary: Readiness; answers 200 only when the database answers.
              responses:
                "200":
                  description: ready
                  headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
                  content: {text/plain: {schema: {type: string}}}
                "503": {$ref: "#/components/responses/Unavailable"}
          /metrics:
            description: "Asked with another of GET, POST, PUT, DELETE and PATCH: 405 (MethodNotAllowed) with Allow: GET."
            get:
              summary: Prometheus metrics (requests, latency, verification failures, ledger events).
              responses:
                "200":
                  description: The text exposition format.
                  headers: {X-Request-Id: {$ref: "#/components/headers/RequestId"}}
                  content: {text/plain: {schema: {type: string}}}
        """
}

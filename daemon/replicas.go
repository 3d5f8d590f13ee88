package daemon

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/store"
)

// Replicas on one PostgreSQL. Each serve is a replica with an id of its
// own, registered in the state database with the address the others reach
// it at ([gateway] replica_address), so that a 2026-07-28 client's retry
// of a call held by one replica, sent by the balancer to another, is
// forwarded to the first (gateway.Options.Peers). A replica says it is
// alive every replicaHeartbeat; one not heard from for replicaExpiry is
// gone (it died without deleting itself), and a retry naming it is
// refused rather than sent to an address that may now be another's.

// replicaHeartbeat is how often a replica says it is alive.
const replicaHeartbeat = 10 * time.Second

// replicaExpiry is how long a replica is taken for alive after it last
// said so: three heartbeats, so that one slow write does not lose it.
const replicaExpiry = 3 * replicaHeartbeat

// stateKeyName names the key, in the state database, that signs the
// requestStates of the calls the gateway bridges: one for every replica.
const stateKeyName = "gateway_request_state"

// derivedStateKey is the key that signs the requestStates of purpose,
// derived from [state] encryption_key: the same on every replica and kept
// out of the database, so that whoever reads the database cannot sign
// one; and the keys that also verify them, derived from
// encryption_key_fallbacks. Nil when no key is set: the caller's key is
// then one made once in the database.
func derivedStateKey(st config.State, purpose string, lookupEnv func(string) (string, bool), secrets secret.Store, red *secret.Redactor) (key []byte, fallbacks [][]byte, err error) {
	if st.EncryptionKey == "" {
		return nil, nil, nil
	}
	pass, err := st.ResolveEncryptionKey(lookupEnv, secrets, red)
	if err != nil {
		return nil, nil, err
	}
	if key, err = secret.DeriveKey(pass, purpose, 32); err != nil {
		return nil, nil, fmt.Errorf("state.encryption_key: %w", err)
	}
	passes, err := st.ResolveEncryptionKeyFallbacks(lookupEnv, secrets, red)
	if err != nil {
		return nil, nil, err
	}
	for i, p := range passes {
		k, err := secret.DeriveKey(p, purpose, 32)
		if err != nil {
			return nil, nil, fmt.Errorf("state.encryption_key_fallbacks[%d]: %w", i, err)
		}
		fallbacks = append(fallbacks, k)
	}
	return key, fallbacks, nil
}

func newReplicaID() string {
	host, _ := os.Hostname()
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", cmp.Or(host, "replica"), os.Getpid(), hex.EncodeToString(b[:]))
}

// replicaAddress is where the other replicas reach a daemon listening at
// ln: [gateway] replica_address when set; else ln's address, with this
// machine's hostname for a wildcard host.
func replicaAddress(configured string, ln net.Addr) string {
	if configured != "" {
		return configured
	}
	tcp, ok := ln.(*net.TCPAddr)
	if !ok {
		return ln.String()
	}
	if tcp.IP == nil || tcp.IP.IsUnspecified() {
		if host, err := os.Hostname(); err == nil && host != "" {
			return net.JoinHostPort(host, strconv.Itoa(tcp.Port))
		}
	}
	return tcp.String()
}

// peer is the address of replica id, for gateway.Options.Peers.
func (d *Daemon) peer(ctx context.Context, id string) (string, error) {
	r, err := d.store.Replica(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", errors.New("it has stopped")
	}
	if err != nil {
		return "", err
	}
	if age := time.Since(r.Seen); age > replicaExpiry {
		return "", fmt.Errorf("not heard from for %s", age.Round(time.Second))
	}
	return r.Address, nil
}

// registerReplica records the daemon as a replica on a PostgreSQL store
// and keeps it recorded until stop, which deletes it (and the replicas
// that died without a word).
func (d *Daemon) registerReplica(ctx context.Context) (stop func()) {
	if d.store.Backend() != "postgres" || d.ln == nil {
		return func() {}
	}
	addr := replicaAddress(d.opts.Config.Gateway.ReplicaAddress, d.ln.Addr())
	save := func() {
		// A bound: a database that does not answer must not hold the
		// heartbeat (the next one tries again).
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), replicaHeartbeat)
		defer cancel()
		if err := d.store.SaveReplica(ctx, d.replica, addr); err != nil {
			d.log.Warn("could not record this replica in the state database", "replica", d.replica, "err", err)
		}
	}
	save()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(replicaHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				save()
			}
		}
	}()
	return sync.OnceFunc(func() {
		cancel()
		<-done
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := d.store.DeleteReplica(ctx, d.replica, time.Now().Add(-replicaExpiry)); err != nil {
			d.log.Warn("could not remove this replica from the state database", "replica", d.replica, "err", err)
		}
	})
}

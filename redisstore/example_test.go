package redisstore_test

import (
	"log"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/redis/go-redis/v9"
)

// Replicas of one server share their tasks through Redis: each is started
// with the same store options and owner key, and its own replica ID.
func ExampleNewTaskStore() {
	client := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:                 []string{"127.0.0.1:6379"}, // several: Cluster; with MasterName: Sentinel
		ContextTimeoutEnabled: true,
	})
	defer client.Close()
	store, err := redisstore.NewTaskStore(client, &redisstore.TaskStoreOptions{Prefix: "myserver:"})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	ownerKey := []byte("the secret every replica is configured with")
	s := mcp.NewServer(&mcp.Implementation{Name: "myserver", Version: "1"}, &mcp.ServerOptions{
		Tasks: &mcp.TaskOptions{Store: store, OwnerKey: ownerKey, ReplicaID: "replica-1"},
	})
	defer s.Close()
	// Add tools and serve s as usual.
}

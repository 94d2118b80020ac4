package qemu

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"time"
)

// QMP sends one command to the QMP monitor of a running guest (the
// Machine's QMP socket) and returns its "return" value: it connects,
// leaves the greeting's negotiation mode with qmp_capabilities, sends
// command with args (nil: none) and reads until the reply, passing over
// the events QEMU sends meanwhile. A reply of "error" is returned as an
// error with QEMU's class and description. Each call is its own
// connection, so that calls from two goroutines do not interleave.
func QMP(ctx context.Context, socket, command string, args any) (json.RawMessage, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, fmt.Errorf("qmp %s: %w", command, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	} else {
		conn.SetDeadline(time.Now().Add(time.Minute))
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	r := bufio.NewReader(conn)
	var greeting struct {
		QMP json.RawMessage `json:"QMP"`
	}
	if err := readJSON(r, &greeting); err != nil || greeting.QMP == nil {
		return nil, fmt.Errorf("qmp %s: no greeting from %s: %v", command, socket, err)
	}
	if _, err := exchange(conn, r, "qmp_capabilities", nil); err != nil {
		return nil, fmt.Errorf("qmp %s: %w", command, err)
	}
	ret, err := exchange(conn, r, command, args)
	if err != nil {
		return nil, fmt.Errorf("qmp %s: %w", command, err)
	}
	return ret, nil
}

// qmpReply is a line QEMU writes: a reply ("return" or "error") or an
// event.
type qmpReply struct {
	Return json.RawMessage `json:"return"`
	Error  *struct {
		Class string `json:"class"`
		Desc  string `json:"desc"`
	} `json:"error"`
	Event string `json:"event"`
}

func exchange(conn net.Conn, r *bufio.Reader, command string, args any) (json.RawMessage, error) {
	req := map[string]any{"execute": command}
	if args != nil {
		req["arguments"] = args
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	for {
		var rep qmpReply
		if err := readJSON(r, &rep); err != nil {
			return nil, err
		}
		switch {
		case rep.Error != nil:
			return nil, fmt.Errorf("%s: %s", rep.Error.Class, rep.Error.Desc)
		case rep.Return != nil:
			return rep.Return, nil
		}
		// An event (DEVICE_DELETED, ...): not the reply.
	}
}

func readJSON(r *bufio.Reader, v any) error {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return err
	}
	return json.Unmarshal(line, v)
}

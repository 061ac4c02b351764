# expect: refused — import of 'socket' is not allowed
import socket

socket.create_connection(("example.com", 80))
